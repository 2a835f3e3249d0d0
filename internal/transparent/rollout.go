package transparent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// rolloutMemory is what the gate remembers of one object's rollout, and the phase last reported.
type rolloutMemory struct {
	memory   rollout.Memory
	reported flotillav1.RolloutPhase
}

// gate asks the rollout gate (package rollout) which chosen clusters may take the object's
// latest revision now, when its Placement rolls revisions out, and adds pins that hold the
// others at the revision they run (after the object's own flotilla.dev/revision-pins, which
// win). The object has no status of Flotilla's: each change of the rollout's phase is an Event
// on it (a Warning when it halts), naming what it waits for. It returns when to look again (a
// soak or a deadline ends; 0: nothing waits on the clock).
func (r *Reconciler) gate(u *unstructured.Unstructured, pc *percluster.Input, records map[string]*flotillav1.Delivery) time.Duration {
	owner := pc.Owner
	if pc.Placement.Spec.Rollout == nil {
		r.mu.Lock()
		delete(r.rollouts, owner)
		r.mu.Unlock()
		return 0
	}
	latest, unkept := pc.Latest.Name, ""
	switch {
	case r.Revisions == nil:
		latest, unkept = pc.LatestName, "this hub keeps no revisions"
	case latest == "":
		latest, unkept = pc.LatestName, "too large to keep"
	}
	r.mu.Lock()
	last := r.rollouts[owner]
	r.mu.Unlock()
	pins, out := fanout.Gate(*pc, latest, unkept, u.GetAnnotations()[flotillav1.AnnotationApprove],
		r.fanout.Running(owner, records, pc.Chosen), time.Now(), last.memory)
	r.mu.Lock()
	r.rollouts[owner] = rolloutMemory{memory: out.Memory, reported: phaseOf(out.Status)}
	r.mu.Unlock()
	// A rollout found complete with nothing remembered (after a restart) was reported before.
	if s := out.Status; s != nil && s.Phase != last.reported && !(last.reported == "" && s.Phase == flotillav1.RolloutComplete) {
		r.reportRollout(u, s)
	}
	pc.Pins = pins
	if out.Next > 0 {
		return out.Next + time.Second/10
	}
	return 0
}

func phaseOf(s *flotillav1.RolloutStatus) flotillav1.RolloutPhase {
	if s == nil {
		return ""
	}
	return s.Phase
}

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

// earliest is the sooner of two waits, 0 being none.
func earliest(a, b time.Duration) time.Duration {
	if b <= 0 {
		return a
	}
	if a <= 0 || b < a {
		return b
	}
	return a
}
