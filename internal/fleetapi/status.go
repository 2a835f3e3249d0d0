package fleetapi

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/rollout"
	"github.com/flotilla-dev/flotilla/internal/statusconds"
)

// Bounds of an APIPropagation's status.
const (
	maxAPIs           = 256
	maxClusterResults = 1000
)

// statusReconciler writes each APIPropagation's status from the latest passes over the RGDs it
// serves, and keeps its finalizer while its removal is Delete. It writes only when the status
// changes, and only once every RGD it serves has been through a pass since the controller
// started: a steady fleet, and a restart, write nothing.
type statusReconciler struct {
	hub             client.Client
	ledger          *ledger.Ledger
	states          *states
	adminNamespaces []string
	notifier        deliver.Notifier
	// counter counts the instances of each API on each cluster; nil: none are shown.
	counter InstanceCounter
}

func (s *statusReconciler) setup(mgr manager.Manager) error {
	return ctrl.ControllerManagedBy(mgr).
		Named("fleetapi-status").
		For(&flotillav1.APIPropagation{}, ctrl.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&flotillav1.Placement{}, handler.EnqueueRequestsFromMapFunc(s.usersOfPlacement)).
		WatchesRawSource(s.notifier.Source()).
		Complete(s)
}

func (s *statusReconciler) notify(name string) {
	if name != "" {
		s.notifier.Notify(render.Owner{Kind: "APIPropagation", Name: name})
	}
}

func (s *statusReconciler) usersOfPlacement(ctx context.Context, obj client.Object) []reconcile.Request {
	return ownerkinds.Requests(propagationsOf(ctx, s.hub, obj))
}

// Reconcile writes one APIPropagation's status and keeps its finalizer.
func (s *statusReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &flotillav1.APIPropagation{}
	if err := s.hub.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var rgds kro.ResourceGraphDefinitionList
	if err := s.hub.List(ctx, &rgds); err != nil {
		return reconcile.Result{}, err
	}
	var props flotillav1.APIPropagationList
	if err := s.hub.List(ctx, &props); err != nil {
		return reconcile.Result{}, err
	}
	if !p.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, s.releaseFinalizer(ctx, p, rgds.Items, props.Items)
	}
	// Kept while removal is Delete, so that deleting the APIPropagation deletes its CRDs first.
	if err := keepFinalizer(ctx, s.hub, p, p.Spec.Removal == flotillav1.DeletionDelete); err != nil {
		return reconcile.Result{}, err
	}
	views, complete := s.views(p, rgds.Items, props.Items)
	problem, err := s.problem(ctx, p)
	if err != nil {
		return reconcile.Result{}, err
	}
	if problem == nil && !complete {
		return reconcile.Result{}, nil // a pass over an RGD is due; it notifies when published
	}
	status := buildStatus(p, problem, views)
	if equality.Semantic.DeepEqual(status, p.Status) {
		return reconcile.Result{}, nil
	}
	// The patch always carries the counts the printer columns show, so that 0 shows as 0 and
	// not blank (a merge patch leaves out what equals its base).
	base := p.DeepCopy()
	base.Status.APICount, base.Status.TargetClusters, base.Status.ServingClusters, base.Status.FailedClusters = -1, -1, -1, -1
	p.Status = status
	return reconcile.Result{}, client.IgnoreNotFound(s.hub.Status().Patch(ctx, p, client.MergeFrom(base)))
}

// apiView is one RGD an APIPropagation chooses: its row in status.apis, and when this
// APIPropagation serves it, the latest pass over it.
type apiView struct {
	result flotillav1.APIResult
	state  *apiState
	// instances is how its instances are doing, by cluster, where that is known.
	instances map[string]clusterInstances
}

// views gathers the RGDs p chooses. complete is false while one p serves has not been through a
// pass at its current generation yet.
func (s *statusReconciler) views(p *flotillav1.APIPropagation, rgds []kro.ResourceGraphDefinition, props []flotillav1.APIPropagation) ([]apiView, bool) {
	complete := true
	seen := map[string]bool{}
	var views []apiView
	for i := range rgds {
		rgd := &rgds[i]
		if !chooses(p, rgd) {
			continue
		}
		seen[rgd.Name] = true
		kind := kro.InstanceKind(rgd)
		v := apiView{result: flotillav1.APIResult{Name: rgd.Name, Kind: kind.Kind + "." + kind.Group, Generation: rgd.Generation}}
		switch placer := placerOf(rgd, props); {
		case hubOnly(rgd):
			v.result.Message = HubOnlyMarker + ` is "false": the ResourceGraphDefinition stays on the hub, served on no cluster`
		case placer != nil && placer.Name != p.Name:
			v.result.Message = "served by APIPropagation " + placer.Name + ", whose name sorts first"
		case !rgd.DeletionTimestamp.IsZero():
			v.result.Message = "the ResourceGraphDefinition is being deleted"
			// Its removal's rows (Removing, and why a CRD waits) and the instances left, once a
			// pass of the deletion has published them.
			if st, ok := s.states.get(rgd.Name); ok && st.placer == p.Name && st.generation == rgd.Generation {
				v.state = &st
				v.instances = s.instancesOf(p, rgd.Name, &st)
			}
		default:
			st, ok := s.states.get(rgd.Name)
			if !ok || st.placer != p.Name || st.generation != rgd.Generation {
				complete = false
				continue
			}
			v.state = &st
			v.instances = s.instancesOf(p, rgd.Name, &st)
		}
		views = append(views, v)
	}
	for _, n := range p.Spec.ResourceGraphDefinitions.Names {
		if !seen[n] {
			views = append(views, apiView{result: flotillav1.APIResult{Name: n, Message: "no ResourceGraphDefinition of this name exists on the hub"}})
		}
	}
	sort.Slice(views, func(i, j int) bool { return views[i].result.Name < views[j].result.Name })
	return views, complete
}

// problem says why p is not Accepted, apart from what it chooses; nil when nothing is wrong.
func (s *statusReconciler) problem(ctx context.Context, p *flotillav1.APIPropagation) (*condition, error) {
	if msg := selectorProblem(p); msg != "" {
		return &condition{flotillav1.ReasonInvalidSpec, msg}, nil
	}
	if msg := placementRefProblem(p, s.adminNamespaces); msg != "" {
		return &condition{flotillav1.ReasonInvalidSpec, msg}, nil
	}
	key := PlacementOf(p)
	if err := s.hub.Get(ctx, key, &flotillav1.Placement{}); err != nil {
		if apierrors.IsNotFound(err) {
			return &condition{flotillav1.ReasonPlacementNotFound,
				fmt.Sprintf("Placement %s does not exist; create it, or fix spec.placementRef (nothing is delivered or removed meanwhile)", key)}, nil
		}
		return nil, err
	}
	return nil, nil
}

// condition is a condition's reason and message.
type condition struct{ reason, message string }

// buildStatus computes an APIPropagation's status from what it chooses and the latest passes
// over the RGDs it serves. It is a pure function: equal inputs give an equal status, with the
// conditions' transition times kept from the current status.
func buildStatus(p *flotillav1.APIPropagation, problem *condition, views []apiView) flotillav1.APIPropagationStatus {
	st := flotillav1.APIPropagationStatus{ObservedGeneration: p.Generation}
	targets := map[string]bool{}
	servingAll := map[string]bool{}
	failedAny := map[string]bool{}
	var rows []flotillav1.APIClusterResult
	var held string
	for _, v := range views {
		if v.state == nil {
			continue
		}
		st.APICount++
		if v.state.held != "" {
			held = v.state.held
		}
		for _, c := range v.state.targets {
			if !targets[c] {
				targets[c] = true
				servingAll[c] = true
			}
		}
	}
	apis := make([]flotillav1.APIResult, 0, len(views))
	for _, v := range views {
		res := v.result
		if v.state != nil {
			for _, row := range v.state.rows {
				if inst, ok := v.instances[row.Cluster]; ok {
					counts := inst.counts
					row.Instances = &counts
					addCounts(&res.Instances, counts)
					addCounts(&st.Instances, counts)
					res.NotReady = append(res.NotReady, inst.notReady...)
				}
				rows = append(rows, row)
				if !targets[row.Cluster] {
					continue
				}
				if row.Phase == flotillav1.APIServing {
					res.ServingClusters++
				} else {
					servingAll[row.Cluster] = false
				}
				if failedPhase(row.Phase) {
					res.FailedClusters++
					failedAny[row.Cluster] = true
				}
			}
		}
		if len(res.NotReady) > instances.MaxNotReady {
			res.NotReady = res.NotReady[:instances.MaxNotReady]
		}
		apis = append(apis, res)
	}
	st.TargetClusters = int32(len(targets))
	for c := range targets {
		if servingAll[c] {
			st.ServingClusters++
		}
	}
	st.FailedClusters = int32(len(failedAny))
	sort.SliceStable(rows, func(i, j int) bool {
		fi, fj := failedPhase(rows[i].Phase), failedPhase(rows[j].Phase)
		if fi != fj {
			return fi
		}
		if rows[i].Cluster != rows[j].Cluster {
			return rows[i].Cluster < rows[j].Cluster
		}
		return rows[i].API < rows[j].API
	})
	if len(rows) > maxClusterResults {
		rows = rows[:maxClusterResults]
	}
	settleRollouts(rows, p.Status.ClusterResults)
	if len(apis) > maxAPIs {
		apis = apis[:maxAPIs]
	}
	st.APIs, st.ClusterResults = apis, rows

	conditions := append([]metav1.Condition(nil), p.Status.Conditions...)
	accepted := acceptedCondition(problem, held, st.APICount)
	setCondition(&conditions, p.Generation, flotillav1.APIPropagationAccepted, accepted)
	setCondition(&conditions, p.Generation, flotillav1.APIPropagationServing, servingCondition(accepted, st, rows))
	statusconds.APIPropagation(&conditions, p.Generation) // Ready, and Reconciling or Stalled, for kubectl wait and kstatus
	st.Conditions = conditions
	return st
}

func acceptedCondition(problem *condition, held string, apis int32) condition {
	switch {
	case problem != nil:
		return *problem
	case held != "":
		return condition{flotillav1.ReasonInvalidSpec, held}
	case apis == 0:
		return condition{flotillav1.ReasonNothingSelected, "no ResourceGraphDefinition is served by this APIPropagation: none it chooses exists, or another APIPropagation serves it (see status.apis)"}
	}
	return condition{flotillav1.ReasonAccepted, fmt.Sprintf("%d ResourceGraphDefinitions chosen", apis)}
}

// servingCondition is Serving's reason and message: the first problem, failures before
// progress, in cluster and API order.
func servingCondition(accepted condition, st flotillav1.APIPropagationStatus, rows []flotillav1.APIClusterResult) condition {
	switch {
	case accepted.reason != flotillav1.ReasonAccepted:
		return condition{flotillav1.ReasonNotAccepted, "Accepted is not True: " + accepted.message}
	case st.TargetClusters == 0:
		return condition{flotillav1.ReasonNoClusters, "the Placement chooses no cluster"}
	}
	for _, phase := range []flotillav1.APIPhase{flotillav1.APICompileFailed, flotillav1.APIBlocked, flotillav1.APIConflict, flotillav1.APIFailed,
		flotillav1.APIPending, flotillav1.APIDelivering, flotillav1.APIRemoving} {
		for _, row := range rows {
			if row.Phase == phase {
				reason := cmp.Or(failedReasons[phase], flotillav1.ReasonProgressing)
				if row.Reason == flotillav1.ReasonPruneBlocked {
					reason = row.Reason // kept until a confirmation: the message names it
				}
				return condition{reason, limit(fmt.Sprintf("%s: %s: %s", row.Cluster, row.API, describe(row)))}
			}
		}
	}
	return condition{flotillav1.ReasonServing, fmt.Sprintf("%d APIs served on %d clusters", st.APICount, st.ServingClusters)}
}

// failedReasons are the Serving reasons of the phases that are failures.
var failedReasons = map[flotillav1.APIPhase]string{flotillav1.APICompileFailed: flotillav1.ReasonCompileFailed,
	flotillav1.APIBlocked: flotillav1.ReasonBlocked, flotillav1.APIConflict: flotillav1.ReasonConflict, flotillav1.APIFailed: flotillav1.ReasonApplyFailed}

func failedPhase(p flotillav1.APIPhase) bool { return failedReasons[p] != "" }

func describe(row flotillav1.APIClusterResult) string {
	parts := []string{string(row.Phase), row.Reason, row.Message}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ", ")
}

func setCondition(conditions *[]metav1.Condition, generation int64, typ string, c condition) {
	status := metav1.ConditionFalse
	if c.reason == flotillav1.ReasonAccepted || c.reason == flotillav1.ReasonServing {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conditions, metav1.Condition{Type: typ, Status: status, Reason: c.reason, Message: c.message, ObservedGeneration: generation})
}

// releaseFinalizer lets a deleted APIPropagation go once no RGD it serves has CRDs left on any
// cluster (the RGD controller removes them, or hands the RGD to another APIPropagation).
func (s *statusReconciler) releaseFinalizer(ctx context.Context, p *flotillav1.APIPropagation, rgds []kro.ResourceGraphDefinition, props []flotillav1.APIPropagation) error {
	if !controllerutil.ContainsFinalizer(p, flotillav1.FinalizerCleanup) {
		return nil
	}
	for i := range rgds {
		placer := placerOf(&rgds[i], props)
		if placer == nil || placer.Name != p.Name {
			continue
		}
		records, err := s.ledger.Records(ctx, ownerOf(rgds[i].Name))
		if err != nil {
			return err
		}
		if len(records) > 0 {
			return nil // the RGD's pass notifies when its records are gone
		}
	}
	return keepFinalizer(ctx, s.hub, p, false)
}

// settleRollouts keeps the since of each row's rollout state that the current status has
// already (after a restart the gate's memory starts empty): a pass that changes nothing writes
// nothing. rows are copies of the published rows; their rollout states are replaced, not
// changed.
func settleRollouts(rows, current []flotillav1.APIClusterResult) {
	type key struct{ cluster, api string }
	was := make(map[key]*flotillav1.ClusterRolloutState, len(current))
	for i := range current {
		was[key{current[i].Cluster, current[i].API}] = current[i].Rollout
	}
	for i := range rows {
		if rows[i].Rollout != nil {
			rows[i].Rollout = rollout.SettleRow(was[key{rows[i].Cluster, rows[i].API}], rows[i].Rollout)
		}
	}
}

// keepFinalizer adds Flotilla's cleanup finalizer to an APIPropagation (want), so that its
// CRDs are deleted before it goes, and removes it otherwise. Its other finalizers are not
// touched: the patch fails rather than overwrite a concurrent change of the list. One gone
// meanwhile needs nothing. (An RGD's finalizer is the owner runner's: owner.go.)
func keepFinalizer(ctx context.Context, hub client.Writer, obj client.Object, want bool) error {
	_, err := ownerkinds.SetFinalizer(ctx, hub, obj, want, ownerkinds.FinalizerPatch{Locked: true})
	return client.IgnoreNotFound(err)
}
