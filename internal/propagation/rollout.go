package propagation

import (
	corev1 "k8s.io/api/core/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// reportRollout emits an Event when the rollout's phase changes: a Warning when it halts, a
// Normal Event otherwise.
func (r *Reconciler) reportRollout(p propagator, before, after *flotillav1.RolloutStatus) {
	if after == nil || r.recorder == nil || (before != nil && before.Phase == after.Phase && before.Revision == after.Revision) {
		return
	}
	kind := corev1.EventTypeNormal
	if after.Phase == flotillav1.RolloutHalted {
		kind = corev1.EventTypeWarning
	}
	r.recorder.Event(p.obj, kind, "Rollout"+string(after.Phase), after.Message)
}
