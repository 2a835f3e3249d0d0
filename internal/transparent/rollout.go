package transparent

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// reportRollout emits the Event of a rollout's new phase on the hub object.
func (r *Reconciler) reportRollout(u *unstructured.Unstructured, s *flotillav1.RolloutStatus) {
	kind := corev1.EventTypeNormal
	if s.Phase == flotillav1.RolloutHalted {
		kind = corev1.EventTypeWarning
	}
	if r.recorder != nil {
		r.recorder.Event(u, kind, "Rollout"+string(s.Phase), "revision "+s.Revision+": "+s.Message)
	}
}
