// Package membership joins spoke clusters to the hub and removes them again.
//
// Joining creates, on the spoke, a flotilla-system namespace with a ServiceAccount, binds it to
// a ClusterRole (flotilla-delivery, which join creates from the spoke's discovery: the verbs
// delivery uses on the resources the spoke serves, named, with no subresource but status and
// scale, so no serviceaccounts/token, pods/exec or proxies, and no escalate, bind or
// impersonate; or a ClusterRole the spoke's admin names), lets it impersonate the
// per-namespace identities (ServiceAccount names in flotilla-system, NamespaceUser) and no one
// else, and
// issues a token with a bounded lifetime through the TokenRequest API, bound to a Secret join
// creates for it. It stores a kubeconfig with that token (never the user's own credentials) in
// a Secret on the hub, then creates the Cluster. The spoke is identified by the UID of its
// kube-system namespace, so one API server cannot be joined under two names. The hub renews
// the token before it expires (package inventory).
//
// Everything join creates on a spoke carries the hub's ID (LabelHub); join refuses to take
// over a same-named object without it, and unjoin leaves such objects alone.
//
// Joining again under the same name issues a new token bound to a new Secret, stores it, and
// deletes the previous Secret, which revokes every token bound to it. Unjoining deletes the
// Cluster, its Secret, and join's spoke objects, the ServiceAccount and the token Secrets
// included (which revokes every token), and reports only what it found and removed. Workloads
// on the spoke are never touched. A Cluster an importer maintains (package sources) is not
// unjoined: Unjoin returns an *ImportedError naming its source and how to remove it there.
//
// A pull-mode cluster (JoinPull, `flotilla join --mode pull`) is joined on the hub alone: the
// Cluster with spec.mode Pull, its agent's ServiceAccount flotilla-system/agent-<cluster>
// (GrantAgent; the work endpoint serves it that cluster's work alone), and a Role and
// RoleBinding of the same name allowing it one thing, creating tokens for itself
// (AgentRenewalRules). JoinPull returns the agent's bootstrap credential, a kubeconfig with a
// token of that account for the hub API server, which the agent renews; StoreAgentCredential
// writes it into a Secret on the spoke (AgentCredentialSecret) with the operator's spoke
// connection, when one is given. Joining a name in the
// other mode than it has is refused (*ModeChangeError). Unjoining a pull cluster deletes the
// Cluster, the ServiceAccount (revoking every token of the agent) and the Role and RoleBinding
// join labelled; it touches no spoke unless given the operator's connection, then only to
// delete that Secret if it carries this hub's label.
package membership
