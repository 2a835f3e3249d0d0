// Package membership joins spoke clusters to the hub and removes them again.
//
// Joining creates, on the spoke, a flotilla-system namespace with a ServiceAccount bound to
// cluster-admin (Flotilla delivers any kind, CRDs included), issues a token for it, and stores a
// kubeconfig with that token (never the user's own credentials) in a Secret on the hub, then
// creates the Cluster. The spoke is identified by the UID of its kube-system namespace, so one
// API server cannot be joined under two names. Joining again under the same name re-issues the
// token and changes nothing else.
//
// Unjoining deletes the Cluster, the Secret and the spoke-side ServiceAccount and binding (which
// revokes the token). Workloads on the spoke are never touched.
package membership
