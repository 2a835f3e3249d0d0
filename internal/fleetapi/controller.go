package fleetapi

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// OwnerKind is the owner kind of the CRDs Flotilla serves from RGDs: the RGD is their owner, not
// the APIPropagation, so moving an RGD from one APIPropagation to another never recreates its
// CRD.
const OwnerKind = "ResourceGraphDefinition." + kroGroup

const (
	kroGroup = "kro.run"
	rgdKind  = "ResourceGraphDefinition"
)

// Timing of passes over an RGD.
const (
	// retryInterval is how soon a cluster that is not connected, or where the RGD did not
	// compile for want of a kind or of readable schemas, is looked at again: installing the
	// missing CRD there serves the API within about this long, with no change on the hub.
	retryInterval = 5 * time.Second
	// resync is how often a served RGD is looked at when nothing happens, to notice a changed
	// schema of a kind it uses on a cluster (one /openapi/v3 root read per cluster; nothing is
	// compiled or written unless that schema changed).
	resync = 5 * time.Minute
	// settleTime is how long publishing a pass waits for deliveries in flight: after a restart
	// the deliverer confirms every CRD within moments, and the status is not rewritten to say
	// "Delivering" in between.
	settleTime = 2 * time.Second
	// connectGrace is how long publishing waits for a cluster the hub's Cluster says is Ready
	// but that is not engaged yet (just after a start), rather than call it disconnected.
	connectGrace = 30 * time.Second
)

// Reconciler serves placed RGDs on their clusters: one pass per RGD compiles it against each
// chosen cluster, delivers the CRD where it may, and records where it stands for the status of
// the APIPropagation serving it (status.go).
type Reconciler struct {
	// Hub reads RGDs, APIPropagations, Placements and Clusters through the hub cache, and
	// patches finalizers and APIPropagation status.
	Hub       client.Client
	Deliverer *deliver.Deliverer
	// Clusters returns engaged spokes (the inventory), whose schemas each RGD is compiled
	// against.
	Clusters multicluster.Provider
	Ledger   *ledger.Ledger
	// Agents says which clusters an agent delivers to (pull clusters; every cluster of a
	// sharded hub); its Hub is set up with the controller.
	Agents ledger.Agents
	// AdminNamespaces are the namespaces whose Placements APIPropagations may use; empty
	// means flotilla-system only.
	AdminNamespaces []string
	// Graphs, when set, is told which kinds each cluster serves, with their graphs: a kind
	// once its CRD is Serving there (at the RGD's generation), until the RGD leaves the
	// cluster. The instances controller expands instances with them.
	Graphs *instances.Memory
	// Revisions, when set, keeps each RGD's distinct specs (revisions.go): a cluster held on an
	// older one expands its instances with it after a restart too, and the APIPropagation may
	// pin a cluster to one (spec.revisionPins). Without it RGDs are served without history.
	Revisions *revisions.Store
	// Instances, when set, says how the instances of each served API are doing on each
	// cluster: the APIPropagations' status shows their counts. Tell InstancesChanged when they
	// change.
	Instances InstanceCounter

	fanout *fanout.Fanout
	// passes runs every RGD's reconcile as every owner kind's (owner.go) and the rollout gate
	// of those whose Placement rolls revisions out (rollout.go).
	passes   *ownerpass.Runner
	schemas  *snapshots
	compiles *compiles
	states   *states
	// lastServed is, by cluster, the revision each RGD's clusters were last seen serving
	// (revisionsInUse); carried is, by the revision of a CRD delivery (fanout.Want.Revision),
	// the RGD revision the last pass's deliveries carry (servedRunning).
	lastServed, carried rgdMemo
	notifier            deliver.Notifier // RGD passes
	drift               ownerkinds.DriftEvents
	status              *statusReconciler
	settle              fanout.Settle[string] // status writes waiting for deliveries in flight, by RGD
}

// Kro's RGDs are read, and carry Flotilla's finalizer while their CRDs are to be deleted with
// them; APIPropagations carry it likewise, and their status is Flotilla's.
// +kubebuilder:rbac:groups=kro.run,resources=resourcegraphdefinitions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=flotilla.dev,resources=apipropagations,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=flotilla.dev,resources=apipropagations/status,verbs=patch

// workers is how many RGDs are compiled and delivered at once. Compiling is CPU work; a few
// workers keep one slow cluster read from holding up the other RGDs.
const workers = 2

// SetupWithManager registers the RGD controller and the APIPropagation status controller. On a
// hub without kro's ResourceGraphDefinition CRD (`flotilla install` adds it) it registers
// nothing and says so: fleet APIs are off until the controller restarts with the CRD there.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	log := ctrl.Log.WithName("fleetapi")
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: kroGroup, Kind: rgdKind}, kro.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			log.Info("Fleet APIs are off: kro's ResourceGraphDefinition CRD is not installed on the hub; run `flotilla install` and restart the controller")
			return nil
		}
		return fmt.Errorf("look up kro's ResourceGraphDefinition on the hub: %w", err)
	}
	r.Hub = mgr.GetClient()
	r.Agents.Hub = r.Hub
	r.fanout = &fanout.Fanout{Hub: r.Hub, Deliverer: r.Deliverer, Ledger: r.Ledger, Agents: r.Agents}
	r.passes = &ownerpass.Runner{Hub: r.Hub, Fanout: r.fanout, Revisions: r.Revisions}
	// core/v1 Events: events.k8s.io would fold drift Events that differ only in their message.
	//lint:ignore SA1019 core/v1 Events on purpose, for the reason above.
	r.drift = ownerkinds.DriftEvents{Recorder: mgr.GetEventRecorderFor("flotilla-fleetapi"), Object: r.servingPropagation}
	r.schemas = newSnapshots()
	r.compiles = newCompiles()
	r.states = newStates()
	r.status = &statusReconciler{hub: r.Hub, ledger: r.Ledger, states: r.states, adminNamespaces: r.AdminNamespaces, counter: r.Instances}

	// A deletion bumps the generation of an object with finalizers, so it passes too.
	specChanged := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("fleetapi-rgd").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		For(&kro.ResourceGraphDefinition{}, builder.WithPredicates(specChanged)).
		Watches(&flotillav1.APIPropagation{}, handler.EnqueueRequestsFromMapFunc(r.rgdsOfPropagation), builder.WithPredicates(specChanged)).
		Watches(&flotillav1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.rgdsOfPlacement)).
		// A record deleted by someone else, or by the garbage collector with its RGD.
		Watches(&flotillav1.Delivery{}, handler.EnqueueRequestsFromMapFunc(ledger.OwnerRequests(func(o flotillav1.DeliveryOwner) bool {
			return o.APIVersion == kro.GroupVersion.String() && o.Kind == rgdKind
		})), builder.WithPredicates(predicate.Or(ledger.Changed(), ledger.Pulled(r.Agents)))).
		WatchesRawSource(r.notifier.Source()).
		Complete(r)
	if err != nil {
		return err
	}
	return r.status.setup(mgr)
}

// Notify asks for a pass over the RGD an owner names, after its deliveries changed. It never
// blocks the deliver worker that calls it.
func (r *Reconciler) Notify(owner render.Owner) { r.notifier.Notify(owner) }

// ClusterReady asks for a pass over every RGD served on a cluster that has just become
// reachable, so that it is compiled and served there without waiting for a retry.
func (r *Reconciler) ClusterReady(name string) {
	if r.states == nil {
		return
	}
	r.schemas.forget(name)
	for _, rgd := range r.states.servingOn(name) {
		r.notifier.Notify(ownerOf(rgd))
	}
}

// ownerOf is the owner of an RGD's CRDs.
func ownerOf(rgd string) render.Owner { return render.Owner{Kind: OwnerKind, Name: rgd} }

func (r *Reconciler) rgdsOfPropagation(ctx context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*flotillav1.APIPropagation)
	if !ok {
		return nil
	}
	names := map[string]bool{}
	for _, n := range r.states.placedBy(p.Name) {
		names[n] = true // it may no longer choose them: they are released
	}
	var rgds kro.ResourceGraphDefinitionList
	if err := r.Hub.List(ctx, &rgds); err == nil {
		for i := range rgds.Items {
			if chooses(p, &rgds.Items[i]) {
				names[rgds.Items[i].Name] = true
			}
		}
	}
	return requests(names)
}

func (r *Reconciler) rgdsOfPlacement(ctx context.Context, obj client.Object) []reconcile.Request {
	names := map[string]bool{}
	for _, p := range propagationsOf(ctx, r.Hub, obj) {
		for _, req := range r.rgdsOfPropagation(ctx, p) {
			names[req.Name] = true
		}
	}
	return requests(names)
}

func requests(names map[string]bool) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(names))
	for n := range names {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
	}
	return out
}

// Reconcile serves one RGD where its APIPropagation's Placement says, or stops serving it
// (owner.go: the runner every owner kind goes through).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.passes.Reconcile(ctx, r, req)
}

// report publishes what a pass over an RGD did: a row per chosen cluster (what its delivery
// says, or why nothing was delivered there), a row per cluster the API is being removed from
// or kept on, and the graphs each cluster's instances are expanded with; it says when to look
// again. A rollout's changes of phase and its stages are said on the RGD as Events.
func (p *rgdPass) report(ctx context.Context, res *ownerpass.Result) (reconcile.Result, error) {
	r, rgd := p.r, p.rgd
	ownerpass.ReportRollout(r.drift.Recorder, rgd, res)
	st := stateOf(rgd, p.placer)
	st.targets = ownerpass.Decisions(p.placement)
	if res.Hold != nil {
		// Nothing was delivered or removed: every cluster keeps what it serves.
		kept := ledger.Clusters(res.Records)
		for _, c := range kept {
			st.rows = append(st.rows, removingRow(rgd.Name, c, res.Hold.Reason, "kept: "+res.Hold.Message))
		}
		r.serveGraphs(ctx, rgd, p.placer, kept, st.rows, nil)
		r.publish(rgd.Name, st)
		return reconcile.Result{RequeueAfter: retryInterval}, res.Err
	}
	out, plans := res.Synced, p.plans
	retry, connecting := false, false
	for _, c := range st.targets {
		plan := plans[c]
		row := plan.row
		switch {
		case out.Failed[c] != "":
			row.Phase, row.Reason, row.Message = flotillav1.APIFailed, flotillav1.ReasonApplyFailed, limit(out.Failed[c])
		case plan.want != nil:
			delivered, ok := out.Results[c]
			row = settle(row, plan.want, delivered, ok, plan.generation)
			if plan.pull {
				row = pullRow(row, res.Records[c])
			}
			switch {
			case row.Phase != flotillav1.APIServing:
			case plan.rolloutHeld != "":
				row.Message = fmt.Sprintf("held by the rollout at revision %s (generation %d)", plan.rolloutHeld, plan.generation)
			case plan.pinned != "":
				row.Message = fmt.Sprintf("pinned by spec.revisionPins to revision %s (generation %d)", plan.pinned, plan.generation)
			}
		}
		if row.Phase == flotillav1.APIPending || row.Reason == flotillav1.ReasonSchemaNotFound || row.Reason == flotillav1.ReasonSchemaUnreadable {
			retry = true
		}
		if state, ok := res.RolloutClusters[c]; ok {
			row.Rollout = &state
		}
		connecting = connecting || plan.connecting
		st.rows = append(st.rows, row)
	}
	// The clusters kept serve their instances meanwhile. Only a Placement that has not caught
	// up with its spec holds removals while the chosen clusters are delivered to
	// (ownerpass.Result.Held); otherwise a removal waits for its confirmation (Refused).
	serving := append(slices.Clone(st.targets), out.Kept...)
	held, reason := res.Held, flotillav1.ReasonPlacementPending
	if held == "" {
		held, reason = out.Refused, flotillav1.ReasonPruneBlocked
	}
	strategy := strategyOf(p.placer, rgd.Name)
	for _, c := range slices.Sorted(maps.Keys(out.Leaving)) {
		if slices.Contains(out.Kept, c) {
			st.rows = append(st.rows, removingRow(rgd.Name, c, reason, "kept: "+held))
		} else {
			st.rows = append(st.rows, removingRow(rgd.Name, c, strategy.Deletion, removalMessage(strategy, out.Leaving[c])))
		}
	}
	waiting := r.serveGraphs(ctx, rgd, p.placer, serving, st.rows, plans)
	for _, c := range waiting {
		if _, removing := out.Leaving[c]; !removing {
			st.rows = append(st.rows, removingRow(rgd.Name, c, flotillav1.DeletionDelete, waitingMessage))
		}
	}
	sort.SliceStable(st.rows, func(i, j int) bool { return st.rows[i].Cluster < st.rows[j].Cluster })

	wait := time.Second // deliveries in flight: published once they settle
	if !r.settling(rgd.Name, st.targets, res.Computed.Want, out.Results, connecting) {
		r.publish(rgd.Name, st)
		wait = resync
		if retry || len(out.Leaving) > 0 || len(waiting) > 0 {
			wait = retryInterval
		}
	}
	if res.Recheck > 0 {
		wait = min(wait, res.Recheck)
	}
	return reconcile.Result{RequeueAfter: wait}, res.Err
}

// strategyOf is how an APIPropagation's CRDs are delivered and removed: a CRD not Flotilla's is
// never taken over, but one kro generated for an RGD of the same name (AdoptMarked).
func strategyOf(p *flotillav1.APIPropagation, rgd string) decide.Strategy {
	return crdStrategy(rgd, p.Spec.Removal, p.Annotations[flotillav1.AnnotationConfirmPrune], "apipropagation "+p.Name)
}

// crdStrategy is strategyOf for an RGD removed as deletion says, a prune confirmed by
// confirmed on confirmOn (a pull cluster's agent reads no confirmation: "").
func crdStrategy(rgd string, deletion flotillav1.DeletionPolicy, confirmed, confirmOn string) decide.Strategy {
	return decide.Strategy{Deletion: cmp.Or(deletion, flotillav1.DeletionOrphan), Conflict: flotillav1.ConflictReject, PruneConfirmed: confirmed,
		ConfirmOn: confirmOn, AdoptMarked: decide.Mark{Key: kro.RGDNameLabel, Value: rgd}}
}

func removalMessage(s decide.Strategy, res deliver.Result) string {
	msg := "releasing the CRD: it stays on the cluster, unmanaged"
	if s.Deletion == flotillav1.DeletionDelete {
		msg = "deleting the CRD"
	}
	if res.Message != "" {
		msg += ": " + res.Message
	}
	return msg
}

// removingRow is the row of a cluster an API is being removed from; reason is the removal's
// DeletionPolicy, or ReasonPruneBlocked while it waits for a confirmation.
func removingRow[R ~string](api, cluster string, reason R, message string) flotillav1.APIClusterResult {
	return flotillav1.APIClusterResult{Cluster: cluster, API: api, Phase: flotillav1.APIRemoving, Reason: string(reason), Message: limit(message)}
}

// guardOf is what the holds of package holds see of an RGD's pass under placer: its
// Placement (nil when it does not exist). A confirmation annotates the APIPropagation. The
// runner adds the clusters chosen and delivered.
func guardOf(placer *flotillav1.APIPropagation, rgd string, placement *flotillav1.Placement) holds.Pass {
	return holds.Pass{Owner: ownerOf(rgd), ConfirmOn: "apipropagation " + placer.Name, Placement: placement,
		PlacementName: PlacementOf(placer).String(), PlacementRef: "spec.placementRef",
		Confirmed: placer.Annotations[flotillav1.AnnotationConfirmPrune], Budget: holds.DefaultBudget}
}

// settling reports whether deliveries of this pass are in flight and younger than settleTime,
// or clusters are connecting and younger than connectGrace, in which case the pass is not
// published yet.
func (r *Reconciler) settling(rgd string, targets []string, want map[string]fanout.Want, results map[string]deliver.Result, connecting bool) bool {
	inFlight, revisions := connecting, ""
	if connecting {
		revisions = "connecting;"
	}
	for _, c := range targets {
		w, ok := want[c]
		if !ok {
			continue
		}
		revisions += c + "=" + w.Revision + ";"
		if res, ok := results[c]; !ok || (res.Revision != w.Revision && !res.Disconnected && res.Message == "") {
			inFlight = true
		}
	}
	bound := settleTime
	if connecting {
		bound = connectGrace
	}
	return r.settle.Waiting(rgd, revisions, inFlight, bound)
}

// publish records an RGD's state and, when it changed, asks for the status of the
// APIPropagations concerned.
func (r *Reconciler) publish(rgd string, st apiState) {
	changed, previous := r.states.set(rgd, st)
	if !changed {
		return
	}
	r.status.notify(st.placer)
	if previous != "" && previous != st.placer {
		r.status.notify(previous)
	}
}

func (r *Reconciler) unpublish(rgd string) {
	r.settle.Forget(rgd)
	if st, ok := r.states.drop(rgd); ok {
		r.status.notify(st.placer)
	}
}
