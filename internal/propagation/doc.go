// Package propagation reconciles Propagations and ClusterPropagations on the hub: it selects
// hub objects and manifests, renders them per chosen cluster, hands the result to the
// deliverer, and is the one writer of their status, which it patches only when the
// fleet-wide result changed (deliveries notify it; one write per change burst, not one per
// cluster or object).
//
// It is an adapter of the one owner reconcile (package ownerpass: ownerpass.Runner.Reconcile
// loads the owner, removes what a deleted one delivered before its finalizer goes, and runs
// its pass, the same for every owner kind): owner.go loads the owner, renders its selection
// and says it with its policy (Placement, strategy, pins, overrides, confirmation) as the
// step's Pass, which ownerpass keeps as a revision, runs through the rollout gate, the
// per-cluster computation, the fleet-wide holds and the fan-out; select.go finds what to
// deliver, hubkinds.go makes sure the hub can watch what is selected; wants.go and status.go
// summarize what the pass did. Preview (preview.go, for `flotilla plan`) runs ownerpass.Plan
// on the same Pass.
//
// One owner never stalls the others: a kind the hub cannot list and watch is refused before
// it is watched (InvalidSpec, or KindUnavailable while it may come back), every hub cache
// read and every reconcile has a deadline, and several owners are reconciled at once.
//
// Pruning safety: selectors that match nothing hold every delivered object in place, unless
// the spec is unchanged and the objects really disappeared from the hub (a typo in a new
// selector must never empty a fleet). The holds every owner kind shares (a missing, lagging or
// emptied Placement, the fleet prune budget) are package holds'; the make-before-break order
// of removals from clusters that left is package fanout's.
package propagation
