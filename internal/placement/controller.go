package placement

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
)

// Reconciler schedules Placements.
type Reconciler struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=flotilla.dev,resources=placements,verbs=get;list;watch
// +kubebuilder:rbac:groups=flotilla.dev,resources=placements/status,verbs=patch

// SetupWithManager registers the controller. Any change to a Cluster's labels, taints, cordon
// or existence re-schedules every Placement; status-only changes of Clusters do not.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		For(&flotillav1.Placement{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&flotillav1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allPlacements),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Complete(r)
}

func (r *Reconciler) allPlacements(ctx context.Context, _ client.Object) []reconcile.Request {
	var list flotillav1.PlacementList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// Reconcile schedules one Placement and records the decisions if they changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &flotillav1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var clusters flotillav1.ClusterList
	if err := r.Client.List(ctx, &clusters); err != nil {
		return reconcile.Result{}, err
	}
	// Chosen before: what the status says, and what the Delivery records of the Placement's
	// owners say (a wiped status must not un-stick a cordoned cluster that holds objects).
	previous, err := ledger.PlacedClusters(ctx, r.Client, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, d := range p.Status.Decisions {
		previous = append(previous, d.ClusterName)
	}
	slices.Sort(previous)
	previous = slices.Compact(previous)
	want := p.Status.DeepCopy()
	result, err := scheduler.Schedule(p.Spec, clusters.Items, previous, string(p.UID))
	status := metav1.ConditionTrue
	if err != nil {
		// Keep the previous decisions: a bad selector must never move workloads.
		result = scheduler.Result{Clusters: previous, Reason: "InvalidSelector", Message: err.Error()}
		status = metav1.ConditionFalse
	} else if len(result.Clusters) == 0 {
		status = metav1.ConditionFalse
	}
	want.Decisions = make([]flotillav1.ClusterDecision, 0, len(result.Clusters))
	for _, name := range result.Clusters {
		want.Decisions = append(want.Decisions, flotillav1.ClusterDecision{ClusterName: name})
	}
	want.SelectedClusters = int32(len(result.Clusters))
	want.ObservedGeneration = p.Generation
	meta.SetStatusCondition(&want.Conditions, metav1.Condition{
		Type: flotillav1.PlacementScheduled, Status: status, Reason: result.Reason,
		Message: result.Message, ObservedGeneration: p.Generation,
	})
	if equality.Semantic.DeepEqual(*want, p.Status) {
		return reconcile.Result{}, nil
	}
	before := p.DeepCopy()
	p.Status = *want
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return reconcile.Result{}, fmt.Errorf("record decisions of placement %s: %w", req, err)
	}
	return reconcile.Result{}, nil
}
