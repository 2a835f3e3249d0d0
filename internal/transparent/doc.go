// Package transparent propagates ordinary hub objects without a Propagation: an object
// labelled flotilla.dev/placement=<name> goes to the clusters that Placement <name> of its
// namespace chooses. Moving it means changing the Placement or the label.
//
// A workload's hub object describes the fleet-wide workload: its spec.replicas is divided
// across the chosen clusters (sorted by name, the remainder to the first ones), and its status
// is written with the fleet-wide sums of the spoke copies' status (replicas, readyReplicas,
// availableReplicas, ...) and their conditions (True only when True everywhere). The hub runs
// no workload controllers, so nothing else writes that status: `kubectl get deploy` on the hub
// answers for the fleet.
//
// Supported kinds are listed in Kinds; each gets one controller on the hub that sees only
// labelled objects. Delivery, ordering, conflicts and pruning are the deliverer's, as for
// Propagations.
package transparent
