// Package propagation reconciles Propagations and ClusterPropagations on the hub: it selects
// hub objects and manifests, renders them per chosen cluster, hands the result to the
// deliverer, and is the one writer of their status, which it patches only when the
// fleet-wide result changed (one write per change burst, not one per cluster or object).
//
// It is an adapter of the one owner reconcile (package ownerpass, docs/architecture.md):
// owner.go loads the owner and says its selection and policy as a Pass; select.go finds what
// to deliver, hubkinds.go makes sure the hub can watch what is selected (a kind it cannot is
// refused before it is watched, and every hub cache read has a deadline, so one owner never
// stalls the others); wants.go and status.go summarize what the pass did. Preview (preview.go,
// for `flotilla plan`) runs ownerpass.Plan on the same Pass.
//
// Selectors that newly match nothing hold every delivered object in place, unless the spec is
// unchanged and the objects really disappeared from the hub: a typo in a new selector must
// never empty a fleet.
package propagation
