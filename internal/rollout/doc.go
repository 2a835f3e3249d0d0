// Package rollout is the rollout gate: which chosen clusters may take an owner's latest
// revision now, when its Placement rolls revisions out stage by stage (spec.rollout). It is
// pure: the owner's package gives it the clusters (their labels, the revision each runs, and
// whether that is Ready or failed), the approval annotation, the clock and what earlier passes
// remembered, and gets back the clusters to hold at the revision they run (pins the per-cluster
// computation, package percluster, honours as it does a person's), the rollout's status, and
// when to look again.
//
// A cluster is done once its record says it runs the latest revision and the deliverer found
// that applied and Ready at the generation Flotilla wrote; it fails when its delivery fails or
// it is not Ready within the progress deadline of being let through. Stages run in order: a
// stage starts once the one before is done (every cluster done or failed) and soaked, and, when
// it asks for approval, approved for this revision; within a stage at most maxUnavailable
// clusters are in flight, taken in a stable order (a hash of the cluster and the revision,
// never the name's order). Past maxFailures the rollout halts: nothing further is let through,
// nothing is rolled back. A cluster that joins gets the revision its stage has reached; one
// that is not reached yet and runs nothing is held at the revision most clusters run. A cluster
// the hub cannot reach fails nothing: not let through yet, it is passed over; let through, it
// holds its stage up to its deadline and no further; it is let through when it returns, its
// deadline starting again.
//
// What it remembers between passes (when each cluster was let through, when each stage was
// done) is in memory: a restart starts a soak or a deadline again, and never shortens one.
package rollout
