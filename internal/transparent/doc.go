// Package transparent propagates ordinary hub objects without a Propagation: an object
// labelled flotilla.dev/placement=<name> goes to the clusters that Placement <name> of its
// namespace chooses. Moving it means changing the Placement or the label.
//
// One edit never removes the object from every cluster unconfirmed: the holds every owner kind
// shares (package holds; hold.go builds their input) keep it where it is delivered when its
// Placement comes to choose no cluster, or more than half of its clusters at once, or its
// label is removed, with a PruneBlocked Event on the hub object naming the `kubectl annotate`
// command that confirms. Deleting the hub object removes its copies.
//
// A workload's hub object describes the fleet-wide workload: its spec.replicas is divided
// across the chosen clusters as the Placement's spec.replicas says, evenly when it says
// nothing (package division, the same as for Propagations), and its status is written with the fleet-wide sums of the spoke copies'
// status (replicas, readyReplicas, availableReplicas, ...) and their conditions (True only when True everywhere); the counts
// of replicas that serve a divided workload count each cluster only up to its share in the current division, and the
// FleetSurplus condition says what runs beyond it (surplus.go), so the hub never shows more ready than desired. The hub runs
// no workload controllers, so nothing else writes that status: `kubectl get deploy` on the hub
// answers for the fleet. The hub cannot read a copy on a pull cluster (Cluster.spec.mode Pull);
// a Deployment's, StatefulSet's or ReplicaSet's copy there counts its desired replicas as
// ready, available and updated once the cluster's agent reports it delivered and Ready, and
// nothing before (pulled.go).
//
// An HPA labelled for the same Placement as the divided workload it scales is divided with it
// (autoscale.go): its bounds by the workload's shares, and it goes only where the workload has
// a share; the workload's copies then leave their replicas to the clusters' HPAs between
// changes of the share (package division, package deliver).
//
// Moves make before they break (package percluster, package division): when the clusters or the division
// change, clusters that gain replicas (or a first copy) get them first, and clusters that lose
// replicas or leave
// keep theirs until every chosen cluster's copy is Ready (kstatus, at the generation Flotilla
// wrote); meanwhile a MoveInProgress Event on the hub object says what the move waits for. Which
// clusters hold a copy is in the Delivery records (package ledger), and so is what each copy is:
// each distinct rendering of the object is kept as a revision (package revisions), and a
// cluster's record names it with the cluster's changes (spec.work).
//
// Transparent mode is an adapter of the one owner reconcile Propagations run too (package
// ownerpass: the owner loaded, removed when deleted or let go, revision kept, rollout gate,
// per-cluster computation with the object divided by default, fleet-wide holds, fan-out with
// records written ahead and make-before-break removal): owner.go turns a labelled object into
// a Pass (or lets an unlabelled one go, once confirmed), gather.go adds the HPAs that follow a
// divided workload, and the Result becomes Events and the object's fleet-wide status.
// Supported kinds are listed in Kinds; each gets one controller on the hub that sees only
// labelled objects. Delivery, ordering, conflicts and pruning are the deliverer's.
//
// Preview (preview.go) computes what an object wants on each cluster for `flotilla plan`: the
// same Pass, through ownerpass.Plan.
package transparent
