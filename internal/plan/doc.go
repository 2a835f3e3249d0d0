// Package plan tells what delivering an owner would do on each cluster, and how the clusters
// differ from it now, without changing anything: every would-be write is a server-side dry
// run, with Flotilla's field manager, so the spoke's own validation, defaults and admission
// decide what the result would be. `flotilla plan` and `flotilla diff` print it.
//
// What each cluster should get (Desired) is not computed here but by each owner's package,
// with the steps its controller takes (propagation.Preview, transparent.Preview,
// fleetapi.Preview): pinned revisions, division, overrides, compiles, and the fleet-wide holds
// of package holds. This package only compares it with the clusters.
//
// Whether an object would be written at all (ownership, tenancy, mode, drift policy) and which
// leftovers a prune would delete are not decided here: plan asks package decide, as the
// deliverer does, so a plan shows the decision a delivery takes.
//
// Secret values never leave this package: in the changes of a Secret, data, stringData and
// kubectl's last-applied annotation are Masked the way `kubectl diff` masks them ("***", or
// "*** (before)" and "*** (after)" for a value that changes), so a plan can be printed,
// logged or pasted into a review without disclosing them.
package plan
