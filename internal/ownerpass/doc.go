// Package ownerpass runs one pass of an owner that delivers objects, the same for every owner
// kind that does (Propagations, ClusterPropagations, transparent-mode hub objects): the
// owner's records, the fleet-wide holds that stop a pass (package holds), its latest revision
// kept, the rollout gate (and a rollback it sets on the owner), the per-cluster computation
// (package percluster), the fleet-wide holds again over the clusters that get objects, and the
// fan-out (package fanout), in this order; Plan computes the same for `flotilla plan`.
//
// The rollout's stages that start or complete are found here, once per pass, from the gate's
// memory (Result.Stages): their durations go to flotilla_rollout_stage_duration_seconds, and
// every kind says them with ReportStages.
//
// Runner.Reconcile is the whole reconcile of such an owner, the same for every kind: an owner
// that no longer exists is forgotten; a deleted one (or one the kind lets go) has its objects
// removed from every cluster its records name before its finalizer is released, with the
// confirmation it carried; otherwise the finalizer is made sure of and the pass runs. An owner
// kind is an adapter (Kind, Owner): it loads its owner, selects and renders its objects, says
// its policy as the Step's Pass (Placement, strategy, pins, override rules, confirmation) and
// reports the Result (a status, or Events). What only one kind knows of the per-cluster input
// (the HPAs that follow a transparent-mode workload) it adds through Pass.Gather.
//
// Fleet APIs (package fleetapi) go through Reconcile and Run too, with their hooks: an RGD
// carries the finalizer only while its CRDs are to be deleted with it, patched beside kro's
// (FinalizerPolicy); letting it go waits for the instances of CRDs being deleted (Releaser);
// and its per-cluster step is its own (Pass.Clusters): what each cluster serves is read from
// the cluster, and its objects are compiled per cluster from the cluster's own schemas, which
// package percluster does not do. Its latest revision is stored before a CRD naming it is
// delivered (Pass.KeepFirst), and its clusters that leave are released at once
// (Pass.ReleaseAtOnce: a CRD does not move; see docs/architecture.md).
package ownerpass
