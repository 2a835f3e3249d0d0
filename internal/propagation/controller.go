package propagation

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/logkeys"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// Reconciler drives Propagations and ClusterPropagations through the pipeline.
type Reconciler struct {
	// Hub reads hub objects through the manager's cache; HubReader reads without caching
	// (Secrets).
	Hub       client.Client
	HubReader client.Reader
	// Deliverer writes to spokes.
	Deliverer *deliver.Deliverer
	// Ledger records what each propagator delivers to each cluster; Revisions keeps what it
	// rendered.
	Ledger *ledger.Ledger
	// Agents says which clusters an agent delivers to (pull clusters; every cluster of a
	// sharded hub); its Hub is set up with the controller.
	Agents    ledger.Agents
	Revisions *revisions.Store
	// AdminNamespaces are the namespaces whose Placements ClusterPropagations may use;
	// empty means flotilla-system only.
	AdminNamespaces []string

	mgr        manager.Manager
	controller controller.Controller
	recorder   record.EventRecorder
	// Notifier takes delivery results back to the queue (Notify: see deliver.Notifier).
	deliver.Notifier
	kinds kindAccess

	fanout *fanout.Fanout
	passes *ownerpass.Runner

	renders *renderCache
	rules   override.Cache

	// mu guards the maps below: reconciles of different owners run at once (workers).
	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
	settle  fanout.Settle[render.Owner]        // status writes waiting for deliveries in flight
	warned  map[render.Owner]map[string]string // the last Warning of each reason, by owner (firstWarning)
	// own holds each propagator's status written within cacheLag, by UID: the API server has
	// it (nothing else writes it) though the cache may not show it yet.
	own *cache.Expiring
}

// cacheLag is how long the controller trusts its own status writes over the hub cache.
const cacheLag = 10 * time.Second

// Every hub write is a merge patch (the finalizer, the status); nothing is updated whole.
// +kubebuilder:rbac:groups=flotilla.dev,resources=propagations;clusterpropagations,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=flotilla.dev,resources=propagations/status;clusterpropagations/status,verbs=patch
// resourceSelectors may name any kind, CRDs included, so the controller may read every kind on
// the hub: Secrets in every namespace too (see selectSecrets for which it ever delivers).
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch

// workers is how many owners are reconciled at once: one owner whose reconcile is slow (a
// kind whose hub cache is syncing, a slow hub) must not hold up the others. Reconciles of one
// owner never overlap (the queue sees to it); what they share is guarded by r.mu or by
// locks of its own (renderCache, own (an Expiring cache), override.Cache, the Deliverer).
const workers = 4

// SetupWithManager registers the controller on the hub manager. r.Deliverer must be set, and
// its results for Propagation and ClusterPropagation owners routed to r.Notify.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	r.mgr = mgr
	r.Hub = mgr.GetClient()
	r.HubReader = mgr.GetAPIReader()
	//lint:ignore SA1019 core/v1 Events on purpose (see ownerkinds.DriftEvents).
	r.recorder = mgr.GetEventRecorderFor("flotilla-propagation")
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("hub discovery client: %w", err)
	}
	r.kinds = kindAccess{discovery: dc, reviews: mgr.GetClient()}
	r.watched = map[schema.GroupVersionKind]bool{}
	r.renders = newRenderCache()
	r.Agents.Hub = r.Hub
	r.fanout = &fanout.Fanout{Hub: r.Hub, Deliverer: r.Deliverer, Ledger: r.Ledger, Agents: r.Agents}
	r.warned = map[render.Owner]map[string]string{}
	r.own = cache.NewExpiring()
	r.passes = &ownerpass.Runner{Hub: r.Hub, Fanout: r.fanout, Revisions: r.Revisions}
	specChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("propagation").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		WithLogConstructor(logkeys.ForOwners(mgr, "propagation", r.OwnerOf)).
		// A deletion bumps the generation too (the API server does, finalizers pending).
		For(&flotillav1.Propagation{}, specChanged).
		Watches(&flotillav1.ClusterPropagation{}, &handler.EnqueueRequestForObject{}, specChanged).
		Watches(&flotillav1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.usersOfPlacement)).
		Watches(&flotillav1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.usersOfCluster),
			builder.WithPredicates(ownerkinds.FactsChanged())).
		// Secrets carrying manifests are watched as metadata only: their data never sits in
		// the hub controller's memory; it is read when a Propagation needs it.
		Watches(sources.SecretMetadata(), handler.EnqueueRequestsFromMapFunc(r.usersOfNamespace), builder.OnlyMetadata).
		// A pinned or unpinned cluster, a record deleted by someone else (written again), or a
		// pull cluster's record taking its agent's result.
		Watches(&flotillav1.Delivery{}, handler.EnqueueRequestsFromMapFunc(ledger.OwnerRequests(func(o flotillav1.DeliveryOwner) bool {
			return o.APIVersion == flotillav1.GroupVersion.String() && IsOwnerKind(o.Kind)
		})), builder.WithPredicates(predicate.Or(ledger.Changed(), ledger.Pulled(r.Agents)))).
		WatchesRawSource(r.Source()).
		Build(r)
	if err != nil {
		return err
	}
	r.controller = c
	return nil
}

// IsOwnerKind reports whether an owner kind is a Propagation's or a ClusterPropagation's.
func IsOwnerKind(kind string) bool { return kind == kindPropagation || kind == kindClusterPropagation }

// watchHubKind starts watching a kind on the hub the first time a propagator selects it,
// once the hub is known to be able to list and watch it (kindAccess): a watch of a kind that
// can never sync would only retry in the background for good.
func (r *Reconciler) watchHubKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	r.mu.Lock()
	watched := r.watched[gvk]
	r.mu.Unlock()
	if watched {
		return nil
	}
	mapping, err := r.Hub.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("watch %s on the hub: %w", gvk, err)
	}
	// Checked without r.mu: it asks the hub, and other owners' reconciles need r.mu meanwhile.
	if err := r.kinds.check(ctx, mapping); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched[gvk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := r.controller.Watch(source.Kind(r.mgr.GetCache(), client.Object(u), handler.EnqueueRequestsFromMapFunc(r.usersOfNamespace))); err != nil {
		return fmt.Errorf("watch %s on the hub: %w", gvk, err)
	}
	r.watched[gvk] = true
	return nil
}

// usersOfNamespace maps a hub object to every propagator that might select it: the
// Propagations of its namespace and every ClusterPropagation.
func (r *Reconciler) usersOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.propagators(ctx, obj.GetNamespace() != "", func(propagator) bool { return true }, client.InNamespace(obj.GetNamespace()))
}

// propagators are the requests of the propagators match says: the Propagations opts list (when
// namespaced) and every ClusterPropagation. A failed list maps to none (the next event maps again).
func (r *Reconciler) propagators(ctx context.Context, namespaced bool, match func(propagator) bool, opts ...client.ListOption) []reconcile.Request {
	var props flotillav1.PropagationList
	var cprops flotillav1.ClusterPropagationList
	var all []propagator
	if namespaced && r.Hub.List(ctx, &props, opts...) == nil {
		for i := range props.Items {
			all = append(all, fromPropagation(&props.Items[i]))
		}
	}
	if r.Hub.List(ctx, &cprops) == nil {
		for i := range cprops.Items {
			all = append(all, fromClusterPropagation(&cprops.Items[i]))
		}
	}
	var reqs []reconcile.Request
	for _, p := range all {
		if match(p) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p.obj)})
		}
	}
	return reqs
}

// usersOfPlacement maps a Placement to the propagators that reference it.
func (r *Reconciler) usersOfPlacement(ctx context.Context, obj client.Object) []reconcile.Request {
	users := ownerkinds.PlacementUsers(ctx, r.Hub, obj, &flotillav1.PropagationList{}, PlacementOf, client.InNamespace(obj.GetNamespace()))
	users = append(users, ownerkinds.PlacementUsers(ctx, r.Hub, obj, &flotillav1.ClusterPropagationList{}, PlacementOf)...)
	return ownerkinds.Requests(users)
}

// get loads the propagator a request names: a ClusterPropagation has no namespace.
func (r *Reconciler) get(ctx context.Context, req reconcile.Request) (propagator, error) {
	if req.Namespace == "" {
		p := &flotillav1.ClusterPropagation{}
		err := r.Hub.Get(ctx, req.NamespacedName, p)
		return fromClusterPropagation(p), err
	}
	p := &flotillav1.Propagation{}
	err := r.Hub.Get(ctx, req.NamespacedName, p)
	return fromPropagation(p), err
}

// Reconcile runs one pass of the pipeline for a propagator (ownerpass.Runner.Reconcile: the
// reconciler is the kind's adapter, owner.go).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.passes.Reconcile(ctx, r, req)
}

// settleTime is how long a status write waits for deliveries in flight: a change that reaches
// every cluster within it costs one status write, not a Progressing write and then another.
const settleTime = 2 * time.Second

// settling reports whether the owner's deliveries of revision are still in flight and younger
// than settleTime, in which case the status write waits.
func (r *Reconciler) settling(owner render.Owner, revision string, in statusInput) bool {
	pending := false
	for _, c := range in.targets {
		if res, ok := in.results[c]; !ok || res.Disconnected || (res.Revision != in.revisionOf(c) && res.Message == "") {
			pending = true
		}
	}
	return r.settle.Waiting(owner, revision, pending, settleTime)
}

// report writes the fleet-wide result of a pass (in) and says what it found in Events; err is
// what stopped the pass.
func (r *Reconciler) report(ctx context.Context, p propagator, in statusInput, err error) (reconcile.Result, error) {
	// The stages that started or completed are said at once, whether or not the status is
	// written now (it waits while deliveries settle) and though the pass failed or held
	// after the gate: the gate's memory says they did, once.
	ownerpass.ReportStages(r.recorder, p.obj, in.rolloutStages)
	if err != nil {
		return reconcile.Result{}, err
	}
	if in.noHistory != "" && r.firstWarning(p.owner(), "NoRevisionHistory", in.revision) {
		r.recorder.Event(p.obj, corev1.EventTypeWarning, "NoRevisionHistory", ownerkinds.Limit("revision "+in.revision+" is delivered but not kept: "+in.noHistory+"; clusters cannot be pinned to it", 1024))
	}
	if unplaced := strings.Join(in.unplaced, "; "); r.firstWarning(p.owner(), flotillav1.ReasonReplicasNotPlaced, unplaced) && unplaced != "" {
		r.recorder.Event(p.obj, corev1.EventTypeWarning, flotillav1.ReasonReplicasNotPlaced, ownerkinds.Limit(unplaced+"; raise the maxima in the Placement's spec.replicas, or lower spec.replicas", 1024))
	}
	if in.hold == nil && r.settling(p.owner(), in.revision, in) {
		return reconcile.Result{RequeueAfter: settleTime}, nil
	}
	if wait := untilStalled(in); wait > 0 && (in.retryAfter == 0 || wait < in.retryAfter) {
		in.retryAfter = wait // a move that waits quietly is reported stalled on time
	}
	wasStalled := isStalled(p.status.Conditions)
	if err := r.writeStatus(ctx, p, in); err != nil {
		return reconcile.Result{}, err
	}
	if moving := meta.FindStatusCondition(p.status.Conditions, flotillav1.PropagationMoving); isStalled(p.status.Conditions) && !wasStalled {
		r.recorder.Event(p.obj, corev1.EventTypeWarning, flotillav1.ReasonMoveStalled, ownerkinds.Limit(moving.Message, 1024))
	}
	return reconcile.Result{RequeueAfter: in.retryAfter}, in.recordErr
}

// prunes reports whether p's deliveries of rendered prune: selectors that suddenly match
// nothing hold what is delivered (nothingSelected); only a selection that emptied while the
// spec stayed the same (objects deleted on the hub) is pruned.
func prunes(p propagator, rendered []*unstructured.Unstructured) bool {
	return len(rendered) > 0 || (p.obj.GetGeneration() == p.status.ObservedGeneration && p.status.SelectedObjects > 0)
}

// nothingSelected says what a propagator whose selectors newly match nothing holds.
const nothingSelected = "the selectors match no object on the hub; delivered objects are kept until the selectors match again or the Propagation is deleted"

// guardOf is what the holds of package holds see of p's pass: placement is p's Placement
// (nil when it does not exist). The caller adds the clusters chosen and delivered.
func guardOf(p propagator, placement *flotillav1.Placement) holds.Pass {
	return holds.Pass{Owner: p.owner(), Placement: placement, PlacementName: p.placementKey().String(), PlacementRef: "spec.placementRef",
		Confirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune], Budget: budgetOf(p)}
}

// budgetOf is p's prune budget in percent, on each cluster and across the fleet.
func budgetOf(p propagator) int {
	if b := p.spec.Strategy.PruneBudgetPercent; b != nil {
		return int(*b)
	}
	return holds.DefaultBudget
}

// strategyOf is how p's deliveries of revision (its objects before per-cluster division and
// overrides) decide: one confirm-prune value, the revision, confirms its prunes everywhere.
func strategyOf(p propagator, revision string) decide.Strategy {
	return decide.Strategy{
		Deletion: p.spec.Strategy.Deletion, Conflict: p.spec.Strategy.Conflict,
		Mode: p.spec.Strategy.Mode, Drift: p.spec.Strategy.Drift,
		PruneBudget: budgetOf(p), PruneConfirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune], ConfirmToken: revision,
	}
}

// RecordDrift emits an Event on the propagator a drift belongs to, as for every owner kind
// (ownerkinds.DriftEvents): Normal when Flotilla corrected it, Warning when it is left (drift
// Report, mode ApplyOnce) and when a fight starts. Deliver workers call it, and it returns at
// once.
func (r *Reconciler) RecordDrift(owner render.Owner, cluster string, d deliver.Drift) {
	events := ownerkinds.DriftEvents{Recorder: r.recorder, LeftBecause: "strategy.drift or mode",
		Object: ownerkinds.ObjectOf(r.Hub, func(owner render.Owner) client.Object {
			if owner.Kind == kindClusterPropagation {
				return &flotillav1.ClusterPropagation{}
			}
			return &flotillav1.Propagation{}
		})}
	events.Record(owner, cluster, d)
}
