// Package scheduler decides which clusters a Placement chooses (Schedule) and how a divided
// workload's replicas are split over them (Divide). Both are pure functions of their inputs
// (the Placement, the Clusters and the previous decisions; the total, the candidates and the
// previous division): no I/O, no clock, so every rule is covered by table tests.
//
// The rules of Schedule, in order, for each Cluster:
//   - a Cluster being deleted is never chosen;
//   - it must be named in clusterNames or match clusterSelector (neither set: nothing matches);
//   - a NoExecute taint the Placement does not tolerate excludes it, even if it was chosen before;
//   - a cordon (spec.unschedulable) or an untolerated NoSchedule taint keeps it out unless it
//     was already chosen: what runs there stays, nothing new arrives.
//
// Health is deliberately not a rule: a spoke that is briefly unreachable keeps its placements,
// so decisions do not flap and nothing is moved because of a network blip.
//
// Divide (division.go) apportions a total by Webster's method (Sainte-Laguë): every seat of
// every candidate has a place in one total order (seats.go): floor seats first, then seats within
// the candidate's estimated room, then overfill seats up to its hard cap (max, placement limits);
// inside each, weighted candidates before standby ones (weight 0) and earlier tiers before later
// ones; then the Webster priority weight/(2k−1) of a candidate's k-th seat (webster.go); then a
// seat the candidate held in the previous division; then a hash of the workload and the cluster
// name, never the name. A division of n replicas is the first n seats of that order, so raising
// the total never lowers a share and removing a candidate never lowers another's (in
// ModeCapacity, while estimates are known: an unknown one weighs the others' mean). A previous
// division is kept while its decisive inputs (the key, key.go) and the total are unchanged,
// adjusted seat by seat when only the total changes, and divided afresh otherwise (path.go).
// Today's caller (package division) passes what runs now as a previous division without a
// key: it is adopted when a fresh division gives the same, else divided afresh with ties to
// the seats held; the key's paths, capacity estimates, tiers and states are the seams the
// scheduling work's capacity, tiers and failover fill in.
//
// Schedule's clusterCount (pick.go) keeps at most N eligible clusters: those chosen before
// first, then the most allocatable CPU, then a hash of the Placement and the name.
//
// Spread (topology domains) is not applied yet. Its seam: it will split the total over the
// domains of the active candidates first and run the same fill per domain, and the constraints
// will join the key.
package scheduler
