// Package deliver is the only code that writes to spokes. It applies rendered objects with
// server-side apply under one field manager, in order (CRDs, waiting until Established, then
// Namespaces, then the rest), and prunes what a Propagation no longer selects.
//
// The Deliverer is a multicluster-runtime runnable: the manager engages into it every spoke the
// inventory engages (engage.go), and a spoke's engagement context, which the library ends when
// the spoke is disengaged or engaged again with new credentials, bounds everything the
// Deliverer holds of that instance — its spoke event handlers above all. A delivery uses the
// instance engaged when it starts; a cluster not engaged is reported Disconnected.
//
// Each cluster has its own queue and workers, so a slow or unreachable spoke never delays
// another (one queue shared by all clusters, as a multicluster-runtime controller has, would
// let one slow spoke hold every worker). Work is keyed by (owner, cluster) and coalesced: a
// burst of changes to one Propagation becomes one delivery of its latest desired set. What a
// delivery learns of its objects alone (kinds, keys, hashes: Identities) is learned once for
// the jobs of every cluster that get the same objects, not once per cluster. A worker
// never waits on a controller: results reach owners through a Notifier, which does not block.
// A cluster's worker retires when no owner delivers there any more, cancelling what it had in
// flight; its spoke event handlers and metric series go with it. A failed delivery is retried
// with backoff; one the spoke did not answer is retried as soon as the spoke answers again
// (answer.go).
//
// An owner is usually a hub object, but it can be an object on a spoke (render.Owner.Cluster:
// an instance of a fleet API): such an owner delivers into its own cluster only, a namespaced
// one into its own namespace only, and its state is written to its own status subresource
// (Job.Status, status.go). A status write targets only the owner itself or an object it
// delivers, never creates anything, and is skipped when the object already shows the status.
//
// What is known of each cluster's objects between deliveries, and the judgement of what the
// spoke watches and reads show (drift, readiness, fights), are package observe's; this
// package does the reading and writing.
//
// What to do with each object is decided by the pure package decide (ownership, tenancy, mode
// and drift policy, which leftovers to prune, the prune budget), which `flotilla plan` asks
// too; this package gathers the decision's inputs from the spoke and carries it out.
//
// Safety rules, all enforced here:
//   - no request is built from an object whose name is not a valid path segment or whose
//     namespace is not a DNS label ("../x", "a/b", "%2e%2e"): it fails on its owner, and the
//     other objects of the delivery go ahead (names.go);
//   - an object already carrying the desired hash (read from the spoke cache, which holds only
//     Flotilla-managed objects) is not written: a steady fleet sees zero writes;
//   - an object that exists without Flotilla's marker is not taken over unless the strategy
//     says Adopt, and one taken over is marked adopted first (adopt.go), with a field manager
//     of its own, and never deleted: released (Flotilla's marks taken off) when its owner no
//     longer wants it; one delivered by another owner stays with it until it lets go, and the
//     other reports a Conflict (and is delivered again when the holder lets go), so two
//     owners never fight;
//   - a namespaced owner's objects are checked against each spoke's own REST mapping before
//     anything of them is read there, and written as the identity of its namespace, which the
//     spoke lets act in that namespace only (nsidentity.go), so the spoke backs the check;
//   - only objects carrying this owner's label and annotation, in its scope, are ever pruned,
//     and only after every apply of the delivery succeeded; the prune budget counts as the
//     owner's only what it wants and what its deliveries confirmed there (observe.Confirmed:
//     Owns), never objects someone else marked; a failure to list, reach or discover anything
//     aborts the prune and is never read as "absent";
//   - an object is compared with what the cluster stores for Flotilla's apply (serverform.go),
//     so a value admission sets is not drift; corrections that someone on the cluster keeps
//     undoing back off, up to one per 5 minutes, and are reported as a fight (fight.go);
//   - fields left to the cluster are neither compared nor changed, an update keeping their
//     live values (decide.IgnoredFields, the one rule the applies, the spoke watches and
//     `flotilla plan` use): the owner's strategy.ignoreFields, and spec.replicas of a divided
//     workload an HPA scales there (its copy carries flotilla.dev/share) for as long as the
//     copy's share annotation is the one desired. A new share is written once; between
//     shares the HPA scales the workload and Flotilla writes nothing to it.
package deliver
