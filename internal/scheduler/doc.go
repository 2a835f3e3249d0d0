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
// Spread (spread.go) splits the total over topology domains first: the values of a cluster
// label among the candidates that take replicas (not FailedOver or Returning, Max not 0). A
// candidate without the label forms its own domain under ScheduleAnyway and gets nothing under
// DoNotSchedule. Each domain is one seat-taker of weight 1 whose floor, room and hard cap sum
// its members' (DoNotSchedule: room is ignored, so a short domain is overfilled, and the cap is
// at most maxSkew above the lowest domain's, or maxSkew with fewer than minDomains domains), and
// the domains take seats by the same order as candidates do: the fewest seats first, then a
// domain's previous share, then a hash of its label. Each domain's part is then divided among
// its members under the next constraint, and with none left by the fill above (mode, weights,
// tiers, floors and caps apply inside the innermost domain). The constraints and the
// candidates' values of their keys join the key; without spread the key is unchanged.
//
// What holds under spread: the sum is min(total, what the caps and the DoNotSchedule skew
// admit) and no candidate exceeds its hard cap or, while the total allows, falls below its
// floor; raising the total never lowers a share (both levels are seat orders); candidate order
// and names do not matter; a division computed again from its result is the same; an
// incremental division from a fresh one is the fresh one. What does not: removing a candidate
// may lower another's share under DoNotSchedule (its domain's cap lowers the others'), and with
// a Previous (a domain's previous share breaks its ties, and it shrinks with its members);
// tiers and weight 0 order clusters inside a domain only, so a domain of standby or later-tier
// clusters still gets its even part.
package scheduler
