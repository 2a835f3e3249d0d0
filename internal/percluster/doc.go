// Package percluster is the one computation of what each cluster an owner's Placement chooses
// gets in a pass, for every owner kind that delivers objects (Propagations and
// ClusterPropagations, transparent-mode objects; fleet APIs compile per cluster and bring their
// own objects): the revision a person pinned the cluster to, or the latest; the cluster's share
// of the divided workloads (the Placement's replica policy, within what its limits admit and
// what it is known to fit), with what a move holds until the clusters that gain are Ready; the
// bounds of the HPAs that scale them; then the override rules that match the cluster.
//
// It is pure: no client, no clock. Package ownerpass gathers the input (the owner's rendered
// objects, the pinned revisions loaded, the clusters' facts, what the records say each cluster
// runs and fits, and what the owner's kind adds) and package fanout runs Compute (within the ledger's admission when clusters
// have placement limits, with the latest results saying which cluster is Ready) and
// delivers its outcome; `flotilla plan` runs the same Compute without readiness, so it shows
// where a division ends. A cluster whose objects cannot be made (a rule fails there, its
// pinned revision is not kept) is in Failed and keeps what it has; every other carries on.
package percluster
