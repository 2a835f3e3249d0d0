// Package dashboard serves Flotilla's web dashboard: what runs where in the fleet, and why.
//
// Pages are rendered on the server with html/template from a cache of the hub's objects
// (Clusters, Placements, Propagations, ClusterPropagations, APIPropagations, Delivery records
// and Flotilla's Events), kept by informers: a viewer's page never reads the API server, and
// changes reach open pages as server-sent events, each page re-rendered for its viewer when the
// cache changes (store.go, sse.go). Secrets are never cached nor shown; the diff of a drifted
// object comes from package plan, which masks a Secret's values. Long lists are cut into pages
// on the server (paging.go), and an owner's matrix into windows of objects × clusters with
// each object's tally on every cluster (matrix.go), so a page of an owner on a thousand
// clusters stays small.
//
// Every page is filtered by what its viewer may read on the hub (access.go). `flotilla
// dashboard` runs it on 127.0.0.1 with the user's kubeconfig: the cache holds only the kinds
// the user may list in every namespace (SelfSubjectAccessReview), and each view asks the same
// way before it shows a kind. `flotilla hub --dashboard-bind-address` serves it from the hub: each
// request carries the caller's bearer token (a header, or a cookie the login page sets),
// checked with a TokenReview, optionally impersonating another user when the caller may, and
// every object shown is checked with a SubjectAccessReview for that identity (authn.go).
//
// Owners' rollouts (status.rollout) show on the owner and Placement pages (rollout.go). The
// dashboard's one write is the approval of a stage waiting for it (approve.go): a POST of the
// same origin with the session's token, for a viewer who may patch the owner, made with the
// caller's own credentials (the request's bearer token on the hub, the kubeconfig locally),
// never the dashboard's.
package dashboard
