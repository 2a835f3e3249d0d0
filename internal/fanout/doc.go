// Package fanout carries one owner's objects to its clusters: the stage every owner kind
// shares (Propagations, ClusterPropagations and transparent-mode hub objects alike), between
// the owner's pass (package ownerpass), which decides what each chosen cluster should have,
// and the deliverer, which writes it.
//
// For each chosen cluster it writes the Delivery record ahead (ledger.Prepare: the kinds are
// recorded before anything of them is applied), submits the delivery, and hands the latest
// result to the ledger. For each cluster the records name that is no longer chosen, it makes
// before it breaks: the owner's objects there are removed only once every chosen cluster has
// its own objects at the revision it should have, applied and Ready (kstatus, at the
// generation Flotilla wrote); until then the move is reported as stalled, naming what is not
// Ready. An owner whose objects do not move (a served API: package fleetapi) asks for its
// clusters that left to be emptied at once instead (Pass.ReleaseAtOnce); the fleet-wide holds
// and confirmations its caller passes (Held, Confirm) apply either way, and Outcome.Kept names
// the clusters they keep. A cluster that is gone (unjoined) is only forgotten: its objects
// stay, unmanaged.
// Cleanup removes a deleted owner's objects from every recorded cluster. When an owner names
// the revision a cluster's objects start from (Want.Base), fanout has the cluster's record say
// what it must run: that revision and the cluster's changes to it (package work), computed only
// when either changed.
//
// Wants runs the one per-cluster computation (package percluster: pins, division and a move's
// holds, overrides) with what it needs of the running system: the latest results (is a
// cluster Ready? the deliverer's, or for a cluster an agent delivers to its record's status)
// and the ledger's admission (placement limits); Planned runs it for
// `flotilla plan`; Facts and Fits read its input from the hub and spokes. It decides nothing
// else about what an owner wants (selection, rendering, fleet-wide holds, confirmations): its
// callers do (package ownerpass, and the owner kinds through it), and pass what they decided
// in a Pass.
package fanout
