// Package fleetapi serves kro ResourceGraphDefinitions (RGDs) of the hub as APIs on spokes: the
// CRD an RGD generates is compiled for each cluster an APIPropagation's Placement chooses,
// against that cluster's own schemas, and delivered there. docs/fleet-apis.md is the user's
// view; docs/architecture.md ("Fleet APIs served: APIPropagations", "Fleet API instances on
// spokes", and pull clusters' agents) says how it works. Flotilla never writes an RGD's spec or
// status.
//
// An RGD is an owner kind of ownerpass.Runner (owner.go) with a per-cluster step of its own
// (pass.go: ownerpass.Pass.Clusters): what each chosen cluster serves is read first (cluster.go:
// the CRD Flotilla delivered, or what a pull cluster's agent reported, pull.go), then each
// cluster is compiled for once (schemas.go, compiles.go) with the newest revision, a pin, or the
// one the rollout gate holds it at (rollout.go, revisions.go). report (controller.go) publishes
// each pass to an in-memory table (states.go), from which the status controller (status.go)
// writes the APIPropagation's status with instance counts (instances.go); graphs.go tells the
// instances controller what each cluster serves. Preview (preview.go) runs the same pass for
// `flotilla plan`, and Spoke (spoke.go) the same compile on a pull cluster's agent.
package fleetapi
