// Package instances expands the instances of fleet APIs on the spokes where they are created:
// a user creates an instance of a kind an RGD defines on one spoke, and Flotilla creates its
// children in that same spoke, with kro's semantics, and writes its status there.
//
// What is served where comes from a Graphs: for each cluster, the kinds whose CRDs are
// Established there and the graph (internal/kro.Compiled, compiled against that cluster) each
// is expanded with, and a notification when that changes. The RGD side (placement, per-spoke
// compilation, CRD delivery) provides it; Memory is an in-memory one, for tests and for that
// side to fill. Nothing here reads RGDs.
//
// The Controller is a multicluster-runtime runnable (manager.Runnable and multicluster.Aware):
// the manager engages every spoke into it, current and future. A pull cluster's agent (package
// agent) runs one too, engaged on its own spoke alone, with a Memory it fills from its own
// compiles.
//
//   - Per engaged spoke and served kind, a dynamic informer watches the instances (all of them:
//     the spoke caches hold only objects carrying Flotilla's owner label, which users do not
//     put on instances). It starts when the kind becomes served or the spoke is engaged, and
//     stops when the kind is no longer served (the instances' jobs are forgotten: nothing is
//     deleted, nothing more enforced) or the spoke is disengaged (nothing happens to anything).
//     A graph of a new revision makes every instance of its kind be evaluated again.
//   - Children live in the spoke cache, since the deliverer marks them as the instance's; an
//     event handler on it routes a child's changes to its instance, named by kro's instance
//     labels, so readyWhen and status fields follow the children.
//   - Events feed the spoke's own queue of mcreconcile.WithCluster[Instance], served by its
//     own workers (queue.go): one spoke's instances, however many or costly, never make
//     another's wait.
//
// A reconcile (reconcile.go) reads the instance from its informer and its children from the
// spoke cache (cacheObserver), runs kro.Evaluate, and submits the outcome to the deliverer as
// one job whose owner is the instance on its spoke (render.Owner with Cluster): the deliverer
// stays the only writer to spokes, a namespaced instance's children are confined to its
// namespace (the deliverer refuses anything else for such an owner), and everything already
// as desired is skipped, so a steady state costs no write and no API request. The job (job.go):
//
//   - Objects are kro's resolved children, in the deliverer's apply order. Dependency order
//     needs no more than that: kro resolves a resource only once what it depends on exists
//     and is ready, so a dependent enters a job only after its dependencies are on the spoke.
//   - Prune is kro's: only when no resource waits on data and none was refused. PruneKinds are
//     the graph's kinds and those the instance's ApplySet inventory lists. No prune budget:
//     an includeWhen turning false is the user's own intent.
//   - OwnerMeta is kro's instance metadata (finalizer, labels, ApplySet inventory), written by
//     the deliverer before any child, and the inventory shrunk only after a successful prune.
//     An instance kro refuses to manage (an invalid inventory) gets none. Metadata someone
//     takes away is put back, as kro does: the deliverer cannot see the instance change, so
//     the reconcile asks it to confirm the job again (Deliverer.Recheck).
//   - Status is the status kro would write (state, conditions, the RGD's status fields),
//     written by the deliverer only when it differs from what was last written or found.
//
// Readiness is trusted only for what is delivered. kro judges readyWhen on the objects it has
// just applied; here the spoke cache may still show the previous ones. So a pass kro finds
// ACTIVE whose children do not all carry, in the cache, the hash of what is being delivered is
// reported IN_PROGRESS (kro.Plan.Hold), and a delivery of the current revision that failed is
// shown on the instance (ERROR when the failure is permanent, such as a child in another
// namespace), since kro's plan cannot know of it. Deliverer results reach Notify and queue
// the instance again.
//
// Deletion (kro's, from the persisted inventory and never from the graph): an instance being
// deleted that carries kro's finalizer shows DELETING, and its job has no objects, PruneKinds
// from its ApplySet inventory (validated as kro validates it; an invalid one blocks deletion,
// saying why), and Job.PruneOrder on kro's apply-order annotation, so the deliverer removes
// its children wave by wave, the highest first, each gone before the next; then it releases
// the finalizer. An instance without the finalizer is not Flotilla's to clean up.
//
// External references (externals.go) are read, never written, from watches shared by the
// instances of a spoke that refer to the same kind in the same namespace, started by the first
// and stopped after the last; a change there evaluates those instances again.
//
// Reads are confined like writes (cacheObserver.confine): under the default tenancy nothing
// outside the instance's namespace is read, child or external reference (Flotilla reads with
// its own identity, which may read anything, and what kro reads can reach the instance's
// status). A query elsewhere, or of a cluster-scoped kind, stops the pass before anything is
// read: the instance shows ERROR saying what and where, and nothing is applied.
//
// A pass kro stopped (a CEL error, a read that failed, a child being deleted) writes its
// status and is retried with backoff, as kro retries. kro's CEL runs under the limits of
// internal/kro (a cost per expression, a budget per pass) and the reconcile's deadline
// (Options.ReconcileTimeout), which interrupts it: an instance whose spec makes its graph too
// costly shows ERROR, naming the expression and the limit, and its spoke's workers are free
// again. A pass stopped by its cost (kro.StoppedByCost) is not retried with backoff: the same
// input costs the same, and what could change it (the instance, its graph, its children, its
// references) queues the instance when it changes; a late look after ten minutes stands in for
// the inputs whose changes queue nothing. A pass stopped by the deadline is retried.
//
// Tenancy: an instance is confined to its namespace (its children, by the deliverer's scope
// rule; its external references, here) unless its Graph is ClusterWide (the API is served with
// tenancy Cluster, which only an administrator sets on the hub): then the job's strategy is
// ClusterWide and references may be read anywhere. A change of either evaluates every instance
// of the kind again. A child bound for a namespace that does not exist waits for it, as under
// kro (the deliverer creates missing namespaces for hub owners only): another child, often of
// another instance, is what makes it.
//
// Every instance the informers see is told to Options.Owners (internal/owners), with its graph's
// ClusterWide scope, so that the spoke caches keep its children whole.
//
// Instances of a cluster-scoped kind are expanded only when their Graph is ClusterWide: they have
// no namespace to be confined to, and anyone allowed to create one would get what its graph
// makes anywhere on the cluster. Otherwise they show ERROR saying so, and nothing else is
// written, not even kro's finalizer; the deliverer refuses every child of such an owner that is
// not cluster-wide, should a job for one reach it.
//
// Counts (counts.go) says how the instances of a kind on a cluster are doing, by kro state,
// naming the first few not ACTIVE with their Ready condition, read from the informer: the hub's
// status of fleet APIs shows them. SubscribeCounts is told when they may have changed: an
// instance added or gone, or its state or reason changed, not every status write.
//
// Taking over from a kro on the cluster: children carrying the instance's ApplySet mark
// (applyset.kubernetes.io/part-of, the same id whoever applied them) are adopted as they are
// (decide.Strategy.AdoptMarked), never recreated; an object without the mark is a conflict.
// The instance stays as kro left it (ACTIVE): for an instance that carries an ApplySet
// inventory, what the spoke cache misses is read from the spoke until it settles (before
// Flotilla first delivers it, kro's children; for a few seconds after each delivery, Flotilla's
// own before their watch events arrive) and the children are judged as they are
// (cacheObserver.takeover), and a child Flotilla never
// delivered that already holds what kro resolves, apart from metadata, does not hold the pass
// (delivering: taking it over changes only labels and annotations).
//
// Not done here yet: a kind that stops being served leaves kro's finalizer on its instances
// (the removal policies of the RGD side will release it).
package instances
