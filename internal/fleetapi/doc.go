// Package fleetapi serves kro ResourceGraphDefinitions (RGDs) of the hub as APIs on spokes: the
// CRD an RGD generates is compiled for each cluster an APIPropagation's Placement chooses,
// against that cluster's own schemas, and delivered there (milestone M1 of fleet APIs).
// Instances of the served kinds are M2 (see below).
//
// The user API is kro's RGD, unchanged, plus a cluster-scoped flotilla.dev APIPropagation that
// chooses RGDs (by name or label) and names a Placement in an admin namespace. The RGD is only
// read: Flotilla writes neither its spec nor its status, so a kro controller running on the hub
// is never fought; its only writes to an RGD are the cleanup finalizer while the RGD's
// APIPropagation says removal: Delete, and flotilla.dev/undo when its rollout rolls back by
// itself (onFailure: Rollback). Where each API stands is in the APIPropagation's status.
//
// One pass over one RGD is every owner kind's pass (ownerpass.Runner.Run: records, fleet-wide
// holds, the revision kept, the rollout gate, the fan-out) with the RGD's own per-cluster step
// (pass.go: ownerpass.Pass.Clusters), since an RGD is compiled for each cluster:
//
//   - The RGD's APIPropagation is the one choosing it whose name sorts first (placer.go); the
//     others show it as served elsewhere. None: the RGD is released (below).
//   - For each chosen cluster (cluster.go): read its schemas (schemas.go: one /openapi/v3 root
//     per cluster per few seconds, the group-versions' documents only when a compile needs
//     them), fingerprint what the RGD uses of them, and compile with internal/kro, cached by
//     (RGD uid, generation, fingerprint) (compiles.go): identical clusters share a compile, and
//     a steady fleet compiles nothing. A compile error is that cluster's (CompileFailed,
//     SchemaNotFound naming the resource and kind); the cluster keeps whatever it served, is
//     looked at again every few seconds, and serves the API as soon as the missing CRD is
//     installed there, with no change on the hub.
//   - Before a served CRD is replaced, kro's compatibility rules (kro.CheckCRDUpdate) refuse a
//     breaking change unless the RGD carries kro.run/allow-breaking-changes: "true" (Blocked),
//     and a CRD of another RGD is a Conflict.
//   - What may be delivered goes through the same fan-out as every owner (package fanout): a
//     Delivery record written ahead, one deliver.Job per cluster whose owner is the RGD
//     (OwnerKind), the CRD with kro's labels, the generation it was compiled from
//     (flotilla.dev/rgd-generation) and Flotilla's markers. The deliverer applies CRDs first and
//     its Result says when the CRD is Established (kstatus): the cluster is then Serving.
//     An unchanged CRD is not written again, so a steady fleet sees no writes. A CRD changed on
//     a cluster is corrected, and the drift is an Event on the APIPropagation serving the RGD
//     (drift.go, the same Events as every owner kind's: ownerkinds.DriftEvents).
//   - A pass reads what each chosen cluster serves before it compiles anything
//     (rgdPass.Running, readCluster: the CRD Flotilla delivered there, or what a pull
//     cluster's agent reported), as every owner's pass reads what clusters run first: the
//     runner keeps those revisions (and the newest, stored before a CRD naming it is
//     delivered: Pass.KeepFirst), and when the Placement rolls revisions out (spec.rollout;
//     rollout.go) its rollout gate, the same for every owner kind (memory, undo, pause), goes
//     by them: what each cluster runs is the revision its CRD names, or the one an earlier
//     pass delivered once the deliverer's result is of it (carried). Each cluster is then
//     compiled for once (rgdPass.Compute, planPins), with the newest revision, the one
//     spec.revisionPins pins, or the one the gate holds it at: then its CRD is not written and
//     its instances keep expanding with the revision it serves. The approval and undo are
//     annotations of the RGD; phase changes and stages that start or complete are Events on
//     it, and its rows say "held by the rollout" and carry the cluster's rollout state (its
//     stage, state and since).
//   - Clusters that left the Placement are released at once by the fan-out (an API does not
//     move, so there is no make-before-break: fanout.Pass.ReleaseAtOnce), under the same
//     fleet-wide holds and budget confirmation as every owner kind's (package holds; a cluster
//     they keep goes on serving its instances): with removal Orphan (default) the CRD stays there, unmanaged,
//     as kro keeps CRDs; with Delete it is deleted, and one that still has instances waits for
//     flotilla.dev/confirm-prune: removed on the APIPropagation (the deliverer's cascade rule).
//   - The pass is published to an in-memory table (states.go), from which the status controller
//     (status.go) writes each APIPropagation's status: counts, status.apis, a bounded
//     status.clusterResults (failures first) and the Accepted and Serving conditions. It writes
//     only when the status changes, and after a restart only once every RGD has been through a
//     pass, so a restart writes nothing either.
//
// A pull cluster (Cluster.spec.mode Pull; pull.go) is planned without being read: the hub
// compiles nothing for it. Its record's spec.work names the RGD revision it must serve (the
// newest, or the one a pin or the rollout holds it at, chosen as above) with the hub's tenancy
// as its one change (AnnotationTenancy), and the digest made of both. Its agent (package agent)
// compiles that revision against its own spoke with this package's planOn (Spoke, spoke.go:
// the same schema views, compile cache, kro's refusals and CRD), delivers the CRD with the
// engine and expands the instances there; what it reports into the record (the digest served,
// or status.reason: CompileFailed, SchemaNotFound, BreakingChange, Conflict) is the cluster's
// row, and the revision a digest names is what it serves, for the history and the rollout
// gate (servedByAgent). Its instances are not counted on the hub.
//
// `flotilla plan rgd/NAME` and `plan apipropagation/NAME` (Preview, preview.go) run the same
// pass through ownerpass.Plan, reading each chosen cluster through a client of the CLI's
// instead of the controller's engagement (spokeView) and compiling against its schemas; under
// a rollout, with the holds the gate gives from what the clusters' CRDs name (nothing
// remembered).
//
// A released RGD (unchosen, deleted, or its APIPropagation deleted) has its records removed and
// its deliveries forgotten; its CRDs are deleted only when its APIPropagation's removal is
// Delete and the RGD or the APIPropagation is being deleted (both then carry Flotilla's
// finalizer until it is done). Unchoosing an RGD by editing the APIPropagation always orphans.
// The RGD's reconcile is the one every owner kind shares (ownerpass.Runner.Reconcile, owner.go:
// Load, Step, Removal; the finalizer policy and the wait for instances are its hooks); its pass
// is the runner's, and report (controller.go) publishes what came of it.
//
// # How M2 (instances) plugs in
//
// M2 watches instances of the served kinds on spokes, expands them with kro's runtime and
// delivers their children; internal/kro's package comment describes the instance reconciler.
// What it needs from this package, and where it goes:
//
//   - The served graph per (RGD, cluster) (graphs.go): a cluster Serving the revision it was to
//     get expands its instances with the graph compiled for it; a cluster held on an older
//     revision (the newest does not compile there, or is Blocked) with that revision's graph,
//     compiled from the RGD spec the revision keeps (revisions.go). Each distinct RGD spec is a
//     revision kept through internal/revisions (a ControllerRevision in the admin namespace,
//     owned by the RGD), and each CRD names the revision it was compiled from
//     (flotilla.dev/api-revision), so after a restart what a cluster serves is read from the
//     cluster. The APIPropagation's spec.revisionPins pin a cluster to a kept revision of an
//     RGD, as every owner's do: the seam a staged rollout drives.
//   - When to start and stop watching a kind on a cluster: the row's transition into Serving
//     (an Established CRD) and out of it (released, cluster gone). publish already notifies on
//     every change; M2 adds a second listener beside the status controller's.
//   - Fleet health (instances.go): the status controller asks an InstanceCounter (the
//     instances controller, which counts from its informers: no API request) how the
//     instances of each row's kind are doing on its cluster, and buildStatus shows them per
//     row, sums them per API and overall, and names the first five not ACTIVE per API. Where
//     they are not known now (after a restart, a cluster out of reach) the status keeps what it
//     showed. The instances controller tells InstancesChanged when counts may have changed;
//     each APIPropagation concerned is looked at again at most once per countsDelay, and
//     written only when its status changes.
//   - Removal Delete with instances: before the CRD's delete, M2 deletes every instance in
//     order (their children wave by wave) while the kind is still served, then this package
//     submits the removal as now.
package fleetapi
