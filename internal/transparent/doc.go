// Package transparent propagates ordinary hub objects without a Propagation: an object
// labelled flotilla.dev/placement=<name> goes to the clusters that Placement <name> of its
// namespace chooses. Moving it means changing the Placement or the label; deleting it removes
// its copies. Supported kinds are listed in Kinds; each gets one controller on the hub that
// sees only labelled objects.
//
// It is an adapter of the one owner reconcile (package ownerpass, docs/architecture.md):
// owner.go turns a labelled object into a Pass (the object divided by default), hold.go lets an
// unlabelled one go once confirmed, gather.go and autoscale.go add the HPAs that follow a
// divided workload, and the Result becomes Events and, for a workload, the fleet-wide status
// the hub object carries (status.go: counts summed and conditions True only when True
// everywhere; surplus.go: counts capped at each cluster's share; pulled.go: copies on pull
// clusters as their agents report them). The hub runs no workload controllers, so `kubectl get
// deploy` on the hub answers for the fleet. Preview (preview.go) runs the same Pass through
// ownerpass.Plan for `flotilla plan`.
package transparent
