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
// It also says where each cluster stands (its stage, its state: Pending, WaitingForApproval,
// Progressing, Soaking, Succeeded, Failed, the revision it runs or is given, since when), each
// stage's state, and the rollout's conditions (Progressing, Complete, Halted); Changes says
// which stages started or completed from one pass's memory to the next, for the Events and the
// stage durations every owner kind reports the same way. Settle* keep since and transition
// times a status says already, so that a status writer writes nothing when nothing changed.
//
// What it remembers between passes (when each cluster was let through, when each stage
// started and was done, since when each cluster is in its state) is in memory: a restart
// starts a soak or a deadline again, and never shortens one.
package rollout
