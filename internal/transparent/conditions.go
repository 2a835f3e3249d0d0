package transparent

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// report is the outcome of an object's latest pass: why it failed or is held (reason and
// message), or nothing (message empty).
type report struct{ reason, message string }

// conditions are what a Propagation's Applied and PruneBlocked conditions would say of the
// pass: Applied False with the reason of a failure or hold, PruneBlocked True while removals
// wait for a confirmation.
func (p report) conditions() []metav1.Condition {
	applied := metav1.Condition{Type: flotillav1.PropagationApplied, Status: metav1.ConditionTrue, Reason: flotillav1.ReasonApplied}
	blocked := metav1.Condition{Type: flotillav1.PropagationPruneBlocked, Status: metav1.ConditionFalse, Reason: flotillav1.ReasonApplied}
	if p.message != "" {
		applied.Status, applied.Reason = metav1.ConditionFalse, p.reason
		if p.reason == flotillav1.ReasonPruneBlocked {
			blocked.Status, blocked.Reason = metav1.ConditionTrue, flotillav1.ReasonPruneBlocked
		}
	}
	return []metav1.Condition{applied, blocked}
}

// MetricsKind is the kind the hub's metrics name r's objects by: the Kind alone (transparent
// mode's kinds have distinct names).
func (r *Reconciler) MetricsKind() string { return r.GVK.Kind }

// OwnerConditions returns, for each labelled object r has passed over and not cleaned up, the
// Applied and PruneBlocked conditions its latest pass would have as a Propagation's status
// (a transparent object's own status is its kind's, so they are kept in memory and reported
// as Events): the hub's flotilla_owners series count them with the Propagations'.
func (r *Reconciler) OwnerConditions() [][]metav1.Condition {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]metav1.Condition, 0, len(r.reported))
	for _, p := range r.reported {
		out = append(out, p.conditions())
	}
	return out
}
