package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
	"github.com/flotilla-dev/flotilla/internal/statusconds"
)

// Reconciler schedules Placements.
type Reconciler struct {
	Client client.Client
	// Owners are the kinds Delivery records may belong to: a record counts as "chosen before"
	// only when the ledger wrote it for a live owner that names the Placement (ledger.Trust).
	Owners   ledger.Owners
	recorder record.EventRecorder
}

// ReasonUntrustedRecords is the Event on a Placement whose records include some the ledger did
// not write for a live owner naming it: they are ignored.
const ReasonUntrustedRecords = "UntrustedDeliveryRecords"

// maxIgnoredListed bounds how many ignored records one Event names.
const maxIgnoredListed = 5

// +kubebuilder:rbac:groups=flotilla.dev,resources=placements,verbs=get;list;watch
// +kubebuilder:rbac:groups=flotilla.dev,resources=placements/status,verbs=patch

// SetupWithManager registers the controller. Any change to a Cluster's labels, taints, cordon,
// readiness or existence re-schedules every Placement; other status changes of Clusters do
// not. A Placement is re-scheduled when its spec or its flotilla.dev/rebalance annotation
// changes, and when a cluster's state would change by the clock (failover, failback).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// The core/v1 recorder, on purpose, as for Propagations: events.k8s.io folds Events that differ
	// only in their message, which would hide which records were ignored.
	//lint:ignore SA1019 core/v1 Events on purpose (see above).
	r.recorder = mgr.GetEventRecorderFor("flotilla-placement")
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		For(&flotillav1.Placement{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, rebalanceChanged))).
		Watches(&flotillav1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allPlacements),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, readinessChanged))).
		Complete(r)
}

// rebalanceChanged passes a Placement whose flotilla.dev/rebalance annotation changed.
var rebalanceChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetAnnotations()[flotillav1.AnnotationRebalance] != e.ObjectNew.GetAnnotations()[flotillav1.AnnotationRebalance]
}}

// readinessChanged passes a Cluster whose Ready condition changed status.
var readinessChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return readyStatus(e.ObjectOld) != readyStatus(e.ObjectNew)
}}

func readyStatus(o client.Object) metav1.ConditionStatus {
	c, ok := o.(*flotillav1.Cluster)
	if !ok {
		return ""
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady); cond != nil {
		return cond.Status
	}
	return ""
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
	// Records anyone else wrote choose nothing.
	previous, ignored, err := ledger.PlacedClusters(ctx, ledger.Trust{Hub: r.Client, Owners: r.Owners}, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.reportIgnored(p, ignored)
	for _, d := range p.Status.Decisions {
		previous = append(previous, d.ClusterName)
	}
	slices.Sort(previous)
	previous = slices.Compact(previous)
	want := p.Status.DeepCopy()
	value := p.Annotations[flotillav1.AnnotationRebalance]
	rebalance := value != "" && value != p.Status.LastRebalance
	result, decisions, requeue, err := scheduler.Decide(p.Spec, clusters.Items, previous, p.Status.Decisions, string(p.UID), time.Now(), rebalance)
	status := metav1.ConditionTrue
	invalid := err
	if err != nil {
		// Keep the previous decisions: a bad selector must never move workloads.
		result = scheduler.Result{Clusters: previous, Reason: flotillav1.ReasonInvalidSelector,
			Message: err.Error() + "; the clusters chosen before stay chosen until it is fixed"}
		decisions, requeue = scheduler.States(p.Spec, previous, clusters.Items, p.Status.Decisions, time.Now(), rebalance)
		status = metav1.ConditionFalse
	} else if len(result.Clusters) == 0 {
		status = metav1.ConditionFalse
	}
	want.Decisions = decisions
	if rebalance {
		want.LastRebalance = value
	}
	want.SelectedClusters = int32(len(result.Clusters))
	want.ObservedGeneration = p.Generation
	meta.SetStatusCondition(&want.Conditions, metav1.Condition{
		Type: flotillav1.PlacementScheduled, Status: status, Reason: result.Reason,
		Message: result.Message, ObservedGeneration: p.Generation,
	})
	statusconds.Placement(&want.Conditions, p.Generation) // Ready, and Stalled, for kubectl wait and kstatus
	if equality.Semantic.DeepEqual(*want, p.Status) {
		return reconcile.Result{RequeueAfter: requeue}, nil
	}
	before := p.DeepCopy()
	p.Status = *want
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return reconcile.Result{}, fmt.Errorf("record decisions of placement %s: %w", req, err)
	}
	if invalid != nil && r.recorder != nil {
		// Once per change of the status: the API accepted the selector, so this Event and
		// the Scheduled condition are where its author learns that it does not parse.
		r.recorder.Event(p, corev1.EventTypeWarning, flotillav1.ReasonInvalidSelector, result.Message)
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// reportIgnored says on the Placement which of its records were ignored, and why.
func (r *Reconciler) reportIgnored(p *flotillav1.Placement, ignored []ledger.Ignored) {
	if len(ignored) == 0 || r.recorder == nil {
		return
	}
	names := make([]string, 0, maxIgnoredListed)
	for _, i := range ignored[:min(len(ignored), maxIgnoredListed)] {
		names = append(names, i.String())
	}
	more := ""
	if len(ignored) > maxIgnoredListed {
		more = fmt.Sprintf(" (and %d more)", len(ignored)-maxIgnoredListed)
	}
	r.recorder.Eventf(p, corev1.EventTypeWarning, ReasonUntrustedRecords,
		"%d Delivery records labelled for this Placement are ignored: Flotilla did not write them for a live owner: %s%s",
		len(ignored), strings.Join(names, "; "), more)
}
