// Package ledger keeps Flotilla's durable record of what each owner delivers to each cluster:
// one Delivery object on the hub per (owner, cluster).
//
// The record is written ahead: before an owner's objects of a kind are first applied to a
// cluster, the kind is in the cluster's record. Removal and pruning read the records, never
// the owner's status (which is a bounded summary for people, and can be wiped by a restore or
// a GitOps re-create) nor the controller's memory (lost at restart). A record goes away only
// when the owner's objects are gone from its cluster, or with its owner (owner reference).
//
// A record also says what its cluster must run (spec.work, RecordWork): the owner's revision
// and the cluster's changes to it (package work). Like the result, it is written aside by the
// ledger's own workers, under a field manager of its own; only a rollout writes it ahead of
// the delivery (WriteWork). The writes a delivery waits for (Prepare, WriteWork) go through a
// client of their own when the caller gives one (Ledger.Ahead), so that they never queue
// behind the writes aside for a client-side rate limit.
//
// Writes are bounded: a record is written when the kinds it lists grow, what its cluster must
// run changes or the delivery's result changes, never in steady state. The ledger reads records from the hub cache and
// remembers its own writes for a short while, so a cache that lags does not cause repeats.
//
// Records are the controller's alone: a ValidatingAdmissionPolicy (package install) refuses
// anyone else's writes, and readers believe a record only where the ledger wrote it for a live
// owner (Trust, trust.go): in the owner's namespace, its owner reference carrying the live
// owner's UID, and, for a Placement's "chosen before" (PlacedClusters), an owner that names
// that Placement. Others are ignored and counted. Pins are not records' business: they are on
// the owners (spec.revisionPins).
//
// It does not decide anything: callers (propagation, transparent) say what to record.
package ledger
