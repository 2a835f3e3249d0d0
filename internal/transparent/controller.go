package transparent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/logkeys"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// strategy is how transparent mode delivers: an object that exists on a cluster without
// being Flotilla's is a conflict, never taken over, and a removed copy is deleted. declared is
// the same as a Propagation's spec would say it, for the records (spec.work).
var (
	strategy = decide.Strategy{Deletion: flotillav1.DeletionDelete, Conflict: flotillav1.ConflictReject}
	declared = flotillav1.PropagationStrategy{Deletion: flotillav1.DeletionDelete, Conflict: flotillav1.ConflictReject,
		Mode: flotillav1.ModeReconcile, Drift: flotillav1.DriftCorrect}
)

// Reconciler propagates labelled hub objects of one kind.
type Reconciler struct {
	GVK       schema.GroupVersionKind
	Hub       client.Client
	Deliverer *deliver.Deliverer
	// Clusters reads copies from the spoke caches, for the fleet's status; the inventory is one.
	Clusters multicluster.Provider
	// Ledger records which clusters have a copy of each object.
	Ledger *ledger.Ledger
	// Agents says which clusters an agent delivers to (pull clusters; every cluster of a
	// sharded hub); its Hub is set up with the controller.
	Agents ledger.Agents
	// Revisions keeps each distinct rendering of an object, which each cluster's record names
	// as what the cluster runs with its changes (spec.work); nil keeps none.
	Revisions *revisions.Store

	// Notifier takes delivery results back to the queue (Notify: see deliver.Notifier).
	deliver.Notifier
	recorder record.EventRecorder

	rules  override.Cache // compiled overrides of each Placement
	fanout *fanout.Fanout
	passes *ownerpass.Runner

	mu       sync.Mutex
	reported map[render.Owner]report // last outcome of each object's pass (a failure as an Event)
}

// The finalizer is a merge patch, and so is the fleet-wide status: patch, never update.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=deployments/status;statefulsets/status;daemonsets/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;patch

// workers is how many objects of a kind are reconciled at once, so one slow object (a spoke
// whose cache is not synced) does not hold up the others. Reconciles of one object never
// overlap; r.reported is guarded by r.mu, and the override cache and the Deliverer lock
// themselves.
const workers = 4

// spokeReadTimeout bounds a read of a spoke cache for status, well within the reconcile's
// deadline: a spoke that does not answer within it (its cache cannot sync) adds nothing to the
// status this time, and costs that read, not the whole pass of every object. Reads of the hub
// cache are bounded by package ownerpass.
const spokeReadTimeout = 5 * time.Second

// SetupWithManager registers the controller for r.GVK.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	//lint:ignore SA1019 core/v1 Events on purpose (see ownerkinds.DriftEvents).
	r.recorder = mgr.GetEventRecorderFor("flotilla-transparent")
	r.reported = map[render.Owner]report{}
	r.Agents.Hub = r.Hub
	r.fanout = &fanout.Fanout{Hub: r.Hub, Deliverer: r.Deliverer, Ledger: r.Ledger, Agents: r.Agents}
	r.passes = &ownerpass.Runner{Hub: r.Hub, Fanout: r.fanout, Revisions: r.Revisions}
	labelled := predicate.NewPredicateFuncs(Delivers)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("transparent-"+strings.ToLower(ownerKind(r.GVK))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		WithLogConstructor(logkeys.ForOwners(mgr, "transparent-"+strings.ToLower(ownerKind(r.GVK)), r.OwnerOf)).
		For(r.newObject(), builder.WithPredicates(labelled)).
		Watches(&flotillav1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.usersOfPlacement)).
		Watches(&flotillav1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.usersOfCluster), builder.WithPredicates(ownerkinds.FactsChanged())).
		// A pinned or unpinned cluster, a record deleted by someone else (written again), or a
		// pull cluster's record taking its agent's result.
		Watches(&flotillav1.Delivery{}, handler.EnqueueRequestsFromMapFunc(ledger.OwnerRequests(func(o flotillav1.DeliveryOwner) bool {
			return o.Kind == r.GVK.Kind && o.APIVersion == r.GVK.GroupVersion().String()
		})), builder.WithPredicates(predicate.Or(ledger.Changed(), ledger.Pulled(r.Agents)))).
		WatchesRawSource(r.Source())
	// A workload and the HPAs that scale it follow each other (autoscale.go).
	switch {
	case division.Divisible(r.GVK.GroupKind()):
		hpa := &unstructured.Unstructured{}
		hpa.SetGroupVersionKind(hpaKind)
		b = b.Watches(hpa, handler.EnqueueRequestsFromMapFunc(r.scaledWorkload), builder.WithPredicates(labelled))
	case r.GVK == hpaKind:
		b = b.Watches(&flotillav1.Delivery{}, handler.EnqueueRequestsFromMapFunc(r.autoscalersOfRecord), builder.WithPredicates(predicate.GenerationChangedPredicate{}) /* a record written, its shares changed, or gone */)
	}
	return b.Complete(r)
}

func (r *Reconciler) newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.GVK)
	return u
}

// OwnerKind is the owner kind of r's objects.
func (r *Reconciler) OwnerKind() string { return ownerKind(r.GVK) }

// usersOfCluster maps a Cluster to the objects of the Placements whose overrides, division or
// rollout may depend on it.
func (r *Reconciler) usersOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	cl, _ := obj.(*flotillav1.Cluster)
	var placements flotillav1.PlacementList
	if err := r.Hub.List(ctx, &placements); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range placements.Items {
		if len(placements.Items[i].Spec.Overrides) > 0 || division.FollowsCluster(placements.Items[i].Spec, true, cl) || placements.Items[i].Spec.Rollout != nil {
			reqs = append(reqs, r.usersOfPlacement(ctx, &placements.Items[i])...)
		}
	}
	return reqs
}

// usersOfPlacement maps a Placement to the objects labelled for it.
func (r *Reconciler) usersOfPlacement(ctx context.Context, p client.Object) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List"))
	return ownerkinds.Requests(ownerkinds.PlacementUsers(ctx, r.Hub, p, list, PlacementOf,
		client.InNamespace(p.GetNamespace()), client.MatchingLabels{flotillav1.LabelPlacement: p.GetName()}))
}

// Reconcile delivers one labelled object to its Placement's clusters and writes its
// fleet-wide status (ownerpass.Runner.Reconcile: the reconciler is the kind's adapter,
// owner.go).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.passes.Reconcile(ctx, r, req)
}

// behind are the clusters a rollout holds at an older revision than the object's latest (a
// person's pin is no rollout's): their copies count no updated replicas in the fleet-wide
// status, so `kubectl rollout status` on the hub follows the fleet's rollout.
func behind(pass ownerpass.Pass, res ownerpass.Result) map[string]bool {
	if res.Rollout == nil {
		return nil
	}
	out := map[string]bool{}
	for c, w := range res.Computed.Want {
		if w.Pinned != "" && flotillav1.PinOf(pass.Pins, c) == "" {
			out[c] = true
		}
	}
	return out
}

// pass is what the object's pass delivers and how (package ownerpass): the object as
// rendered, the pins its flotilla.dev/revision-pins annotation sets (an error when it cannot be
// read), its Placement's override rules, and what only transparent mode adds to the
// per-cluster input (gather).
func (r *Reconciler) pass(u *unstructured.Unstructured, owner render.Owner, placement *flotillav1.Placement, rendered *unstructured.Unstructured,
	paused bool) (ownerpass.Pass, error) {
	pins, err := flotillav1.ParseRevisionPins(u.GetAnnotations()[flotillav1.AnnotationRevisionPins])
	if err != nil {
		return ownerpass.Pass{}, err
	}
	objs := []*unstructured.Unstructured{rendered}
	return ownerpass.Pass{Paused: paused, Owner: r.ledgerOwner(u, owner), Object: u, Placement: placement, Objects: objs, Revision: render.Revision(objs),
		Pins: pins, Approved: u.GetAnnotations()[flotillav1.AnnotationApprove], Undo: u.GetAnnotations()[flotillav1.AnnotationUndo], DivideByDefault: true,
		Rules: r.rules.Get(placement.Namespace+"/"+placement.Name, placement.Generation, placement.Spec.Overrides),
		Guard: r.guard(u, owner, placement), Prune: true, Kinds: []string{render.KindString(r.GVK)},
		Strategy: strategy, Declared: declared,
		Gather: func(ctx context.Context, in *percluster.Input, records map[string]*flotillav1.Delivery, live bool) (time.Duration, error) {
			return r.gather(ctx, u, in, records, live)
		}}, nil
}

// deploymentKind is the one kind kubectl rollout pause steers fleet-wide.
var deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// render renders the object for its clusters. A Deployment whose Placement rolls its revisions
// out and that is paused on the hub (spec.paused: `kubectl rollout pause deployment/NAME`)
// pauses the fleet's rollout (paused): spec.paused is left out of its copies, before they are
// rendered, so pausing makes no new revision, and each cluster's own rollout of the revision it
// was given goes on. Without a rollout, spec.paused is delivered as it is.
func (r *Reconciler) render(u *unstructured.Unstructured, owner render.Owner, placement *flotillav1.Placement) (rendered *unstructured.Unstructured, paused bool, err error) {
	src := u
	if placement.Spec.Rollout != nil && r.GVK.GroupKind() == deploymentKind {
		if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "paused"); set {
			paused, _, _ = unstructured.NestedBool(u.Object, "spec", "paused")
			src = u.DeepCopy()
			unstructured.RemoveNestedField(src.Object, "spec", "paused")
		}
	}
	rendered, err = render.Render(src, owner)
	return rendered, paused, err
}

// failure is the reason and message of the Warning a pass of the object calls for ("" when
// none): the first chosen cluster whose objects could not be computed (its Placement's
// overrides fail there, or its pinned revision is not kept) or delivered, else a removal
// waiting for a confirmation, a move waiting for readiness, replicas without a cluster.
func (r *Reconciler) failure(placement *flotillav1.Placement, res ownerpass.Result, key string) (reason, message string) {
	var failure string
	if res.Unmade != nil {
		failure = res.Unmade.Error()
	}
	for _, c := range res.Chosen {
		if msg, failed := res.Computed.Failed[c]; failed && failure == "" {
			failure = c + ": Placement " + placement.Name + ": " + msg
			if pin := flotillav1.PinOf(res.Pins, c); pin != "" && pin != res.LatestName {
				failure = c + ": " + msg
			}
			break
		}
	}
	out := res.Synced
	for _, c := range res.Chosen {
		if msg, failed := out.Failed[c]; failed && failure == "" {
			failure = c + ": " + msg
		}
		if got, ok := out.Results[c]; ok && got.Revision == res.Computed.Want[c].Revision && got.Failed > 0 && failure == "" {
			failure = c + ": " + got.Message
		}
	}
	stalled := res.Computed.Stalled
	if stalled == "" {
		stalled = out.Stalled
	}
	switch {
	case out.Refused != "":
		return flotillav1.ReasonPruneBlocked, out.Refused
	case failure == "" && stalled != "":
		return flotillav1.ReasonMoveInProgress, stalled
	case failure == "" && len(res.Computed.Unplaced) > 0:
		return flotillav1.ReasonReplicasNotPlaced, res.Computed.Unplaced[key]
	default:
		return "DeliveryFailed", failure
	}
}

// reportFailure records the outcome of an object's pass (failure empty: none), and emits a
// Warning Event on the hub object when a delivery fails, once per distinct failure.
func (r *Reconciler) reportFailure(u *unstructured.Unstructured, owner render.Owner, reason, failure string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	previous := r.reported[owner]
	r.reported[owner] = report{reason: reason, message: failure}
	if failure != "" && previous.message != failure {
		r.recorder.Event(u, corev1.EventTypeWarning, reason, failure)
	}
}

// dropConfirmation takes the confirmation value off the hub object, if it carries it.
func (r *Reconciler) dropConfirmation(ctx context.Context, u *unstructured.Unstructured, value string) error {
	if u.GetAnnotations()[flotillav1.AnnotationConfirmPrune] != value {
		return nil
	}
	before := u.DeepCopy()
	ownerpass.WithoutConfirmation(u)
	if err := r.Hub.Patch(ctx, u, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("remove the used confirmation %s=%s from %s %s: %w", flotillav1.AnnotationConfirmPrune, value, r.GVK.Kind, client.ObjectKeyFromObject(u), err)
	}
	return nil
}

// ledgerOwner is a hub object as the owner of Delivery records.
func (r *Reconciler) ledgerOwner(u *unstructured.Unstructured, owner render.Owner) ledger.Owner {
	return ledger.Owner{Owner: owner, APIVersion: r.GVK.GroupVersion().String(), ObjectKind: r.GVK.Kind, UID: u.GetUID(),
		Placement: PlacementOf(u)}
}

// writeStatus writes a workload's fleet-wide status from its spoke copies, if it changed.
// shares are a divided workload's shares per cluster (nil: not divided; see aggregate); behind
// the clusters a rollout has not reached yet; pulled the copies on pull clusters, which the
// hub cannot read, as their agents reported them (pulledCopies).
func (r *Reconciler) writeStatus(ctx context.Context, u *unstructured.Unstructured, clusters []string, shares map[string]int64, behind map[string]bool,
	pulled map[string]*unstructured.Unstructured) error {
	if r.GVK.Group != "apps" && r.GVK.Group != "batch" {
		return nil
	}
	var copies []spokeCopy
	for _, c := range clusters {
		if p, ok := pulled[c]; ok {
			copies = append(copies, spokeCopy{cluster: c, obj: p, behind: behind[c]})
		} else if live, ok := r.spokeCopy(ctx, c, client.ObjectKeyFromObject(u)); ok {
			copies = append(copies, spokeCopy{cluster: c, obj: live, behind: behind[c]})
		}
	}
	previous, _, _ := unstructured.NestedMap(u.Object, "status")
	want := aggregate(copies, u.GetGeneration(), previous, shares)
	if equality.Semantic.DeepEqual(previous, want) || (len(previous) == 0 && len(want) == 0) {
		return nil
	}
	before := u.DeepCopy()
	if err := unstructured.SetNestedMap(u.Object, want, "status"); err != nil {
		return err
	}
	if err := r.Hub.Status().Patch(ctx, u, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("write fleet status of %s %s: %w", r.GVK.Kind, client.ObjectKeyFromObject(u), err)
	}
	return nil
}

// spokeCopy reads an object's copy on a cluster from the spoke cache, within
// spokeReadTimeout.
func (r *Reconciler) spokeCopy(ctx context.Context, clusterName string, key client.ObjectKey) (*unstructured.Unstructured, bool) {
	ctx, cancel := context.WithTimeout(ctx, spokeReadTimeout)
	defer cancel()
	cl, err := r.Clusters.Get(ctx, multicluster.ClusterName(clusterName))
	if err != nil {
		return nil, false
	}
	live := r.newObject()
	if err := cl.GetCache().Get(ctx, key, live); err != nil {
		return nil, false
	}
	return live, true
}

// RecordDrift emits an Event on the hub object whose copy on a cluster drifted, as for every
// owner kind (ownerkinds.DriftEvents). Deliver workers call it, and it returns at once.
func (r *Reconciler) RecordDrift(owner render.Owner, cluster string, d deliver.Drift) {
	events := ownerkinds.DriftEvents{Recorder: r.recorder,
		Object: ownerkinds.ObjectOf(r.Hub, func(render.Owner) client.Object { return r.newObject() })}
	events.Record(owner, cluster, d)
}
