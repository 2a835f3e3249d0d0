// Package scheduler decides which clusters a Placement chooses (Schedule) and how a divided
// workload's replicas are split over them (Divide). Both are pure functions of their inputs
// (the Placement, the Clusters and the previous decisions; the total, the clusters and what
// runs where now): no I/O, no clock, so every rule is covered by table tests.
//
// The rules, in order, for each Cluster:
//   - a Cluster being deleted is never chosen;
//   - it must be named in clusterNames or match clusterSelector (neither set: nothing matches);
//   - a NoExecute taint the Placement does not tolerate excludes it, even if it was chosen before;
//   - a cordon (spec.unschedulable) or an untolerated NoSchedule taint keeps it out unless it
//     was already chosen: what runs there stays, nothing new arrives.
//
// Health is deliberately not a rule: a spoke that is briefly unreachable keeps its placements,
// so decisions do not flap and nothing is moved because of a network blip.
package scheduler
