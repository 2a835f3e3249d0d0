// Package hub assembles Flotilla's hub controller: one multicluster-runtime manager on the hub
// API server, the inventory provider that engages spokes, and (as they arrive) the controllers
// of the later pipeline stages. `flotilla hub`, `flotilla dev up` and the integration tests all
// run it through Run, so they run the same thing.
//
// Its owner kinds are one table (owners.go, an ownerkinds.Registry): the ledger's trust in
// Delivery records, the registry of known owners (internal/owners, fed from the hub informers
// of every owner kind; the inventory engages spokes once those have synced, and the spoke caches
// keep whole only the objects of those owners) and the routing of delivery results and drift to
// each kind's controller are built from it.
//
// Its metrics endpoint serves HTTPS behind the hub API server's authentication and
// authorization (a TokenReview of the scraper's token, a SubjectAccessReview for get on
// /metrics); plain HTTP without either is for a loopback address only (metrics.go).
package hub
