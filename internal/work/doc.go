// Package work says what one cluster must run of one owner in terms the hub stores durably:
// the owner's revision (a ControllerRevision) and, per object that differs on the cluster, a
// JSON merge patch (its share of divided replicas, its overrides' result) or its omission.
// Changes computes that from the objects before and after the cluster's own changes; Apply
// turns a revision's objects and the changes back into what the cluster runs. Both are pure:
// the ledger writes the result into the cluster's Delivery record (spec.work), and anything
// that reads the hub (a pull-mode agent, `flotilla plan`, a person) gets the same objects the
// hub delivers without the hub's caches or logic.
//
// Not here: how an owner decides what a cluster gets (its controller), where revisions are
// kept (package revisions), and writing records (package ledger).
package work
