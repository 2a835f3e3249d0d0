// Package statusconds gives Flotilla's own objects the conditions that tools reading status
// generically look for, so that `kubectl wait --for=condition=Ready`, kstatus
// (sigs.k8s.io/cli-utils, which kubectl's and GitOps tools' health checks follow) and Flux or
// Argo CD health checks read them without knowing Flotilla:
//
//   - status.observedGeneration, which every status writer sets;
//   - Ready, True when the object is fully done: a Cluster and a Propagation have it from their
//     own condition trees; a Placement's mirrors Scheduled and an APIPropagation's sums up
//     Accepted and Serving (Ready here);
//   - Reconciling and Stalled, kstatus' abnormal-true conditions, present only while True:
//     Reconciling while the object's change is under way (kstatus InProgress), Stalled while it
//     cannot go on without someone changing something (kstatus Failed). Neither: kstatus
//     Current. They are derived from the object's own conditions, never written alone; a
//     Propagation's also from its status.rollout (Reconciling while the rollout progresses,
//     soaks or waits for an approval; Stalled while it is halted).
//
// Clusters keep Ready and CredentialsValid only: a cluster that does not answer is a state of
// the world, not a reconcile that failed. Delivery records carry no conditions: they are the
// hub controller's bookkeeping, not something anyone waits for.
package statusconds
