package statusconds

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The condition types kstatus reads.
const (
	Ready       = "Ready"
	Reconciling = "Reconciling"
	Stalled     = "Stalled"
)

// phase is what an object's conditions say of its reconcile.
type phase int

const (
	done       phase = iota // nothing under way, nothing stuck: kstatus Current
	inProgress              // Reconciling: kstatus InProgress
	failed                  // Stalled: kstatus Failed
)

// set writes Reconciling or Stalled (True, with reason and message) as ph says, and removes
// the other, or both when done.
func set(conds *[]metav1.Condition, generation int64, ph phase, reason, message string) {
	switch ph {
	case inProgress:
		meta.RemoveStatusCondition(conds, Stalled)
		meta.SetStatusCondition(conds, metav1.Condition{Type: Reconciling, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation})
	case failed:
		meta.RemoveStatusCondition(conds, Reconciling)
		meta.SetStatusCondition(conds, metav1.Condition{Type: Stalled, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation})
	default:
		meta.RemoveStatusCondition(conds, Reconciling)
		meta.RemoveStatusCondition(conds, Stalled)
	}
}

// Propagation sets Reconciling or Stalled on a Propagation's or ClusterPropagation's
// conditions from its Applied, Ready and Moving conditions: stalled while a spec, a conflict,
// a refusal of the cluster, an unreadable kind or a confirmation stops it, or a move waited
// past its deadline; reconciling while objects are on their way or not ready yet.
func Propagation(conds *[]metav1.Condition, generation int64) {
	ph, reason, message := propagationPhase(*conds)
	set(conds, generation, ph, reason, message)
}

// PropagationWithRollout is Propagation for an owner whose latest revision rolls out
// (status.rollout; nil: none), the rollout having its say: Stalled while it is halted (reason
// RolloutHalted, its message naming the failed clusters), Reconciling while it progresses,
// soaks or waits for an approval (reason Rollout<phase>) and the delivery is otherwise done. A
// paused, undone or complete rollout changes nothing.
func PropagationWithRollout(conds *[]metav1.Condition, generation int64, r *flotillav1.RolloutStatus) {
	ph, reason, message := propagationPhase(*conds)
	switch {
	case r == nil:
	case r.Phase == flotillav1.RolloutHalted || meta.IsStatusConditionTrue(r.Conditions, flotillav1.RolloutConditionHalted):
		ph, reason, message = failed, "Rollout"+string(flotillav1.RolloutHalted), r.Message
	case ph != done:
		// The delivery's own reason says more.
	case r.Phase == flotillav1.RolloutProgressing, r.Phase == flotillav1.RolloutSoaking, r.Phase == flotillav1.RolloutWaitingForApproval:
		ph, reason, message = inProgress, "Rollout"+string(r.Phase), r.Message
	}
	set(conds, generation, ph, reason, message)
}

// propagationPhase is what a Propagation's own conditions say of its reconcile.
func propagationPhase(conds []metav1.Condition) (ph phase, reason, message string) {
	applied := meta.FindStatusCondition(conds, flotillav1.PropagationApplied)
	ready := meta.FindStatusCondition(conds, flotillav1.PropagationReady)
	moving := meta.FindStatusCondition(conds, flotillav1.PropagationMoving)
	switch {
	case applied == nil:
		return inProgress, flotillav1.ReasonProgressing, "not reconciled yet"
	case moving != nil && moving.Status == metav1.ConditionTrue && moving.Reason == flotillav1.ReasonMoveStalled:
		return failed, moving.Reason, moving.Message
	case applied.Status == metav1.ConditionTrue && ready != nil && ready.Status != metav1.ConditionTrue:
		return inProgress, ready.Reason, ready.Message
	case applied.Status == metav1.ConditionTrue:
		return done, "", ""
	}
	switch applied.Reason {
	case flotillav1.ReasonInvalidSpec, flotillav1.ReasonPlacementNotFound, flotillav1.ReasonConflict, flotillav1.ReasonApplyFailed,
		flotillav1.ReasonKindUnavailable, flotillav1.ReasonPruneBlocked:
		return failed, applied.Reason, applied.Message
	case flotillav1.ReasonNoClusters, flotillav1.ReasonNothingSelected:
		// Nothing to deliver: done, as the Applied condition says why.
		return done, "", ""
	}
	return inProgress, applied.Reason, applied.Message
}

// Placement sets Ready on a Placement's conditions, as its Scheduled condition is, and
// Stalled while a selector does not parse.
func Placement(conds *[]metav1.Condition, generation int64) {
	scheduled := meta.FindStatusCondition(*conds, flotillav1.PlacementScheduled)
	if scheduled == nil {
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: Ready, Status: scheduled.Status, Reason: scheduled.Reason, Message: scheduled.Message, ObservedGeneration: generation})
	if scheduled.Reason == flotillav1.ReasonInvalidSelector {
		set(conds, generation, failed, scheduled.Reason, scheduled.Message)
	} else {
		set(conds, generation, done, "", "")
	}
}

// APIPropagation sets Ready on an APIPropagation's conditions (True when Accepted and Serving
// are, else as the first of them that is not) and Reconciling or Stalled: stalled while it is
// not accepted or an API cannot be served on a cluster, reconciling while CRDs are on their
// way.
func APIPropagation(conds *[]metav1.Condition, generation int64) {
	accepted := meta.FindStatusCondition(*conds, flotillav1.APIPropagationAccepted)
	serving := meta.FindStatusCondition(*conds, flotillav1.APIPropagationServing)
	if accepted == nil || serving == nil {
		return
	}
	first := serving
	if accepted.Status != metav1.ConditionTrue {
		first = accepted
	}
	ready := metav1.Condition{Type: Ready, Status: first.Status, Reason: first.Reason, Message: first.Message, ObservedGeneration: generation}
	meta.SetStatusCondition(conds, ready)
	switch {
	case accepted.Status != metav1.ConditionTrue:
		set(conds, generation, failed, accepted.Reason, accepted.Message)
	case serving.Status == metav1.ConditionTrue, serving.Reason == flotillav1.ReasonNoClusters:
		set(conds, generation, done, "", "")
	case serving.Reason == flotillav1.ReasonProgressing:
		set(conds, generation, inProgress, serving.Reason, serving.Message)
	default:
		set(conds, generation, failed, serving.Reason, serving.Message)
	}
}
