package propagation

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/percluster"
)

// gate asks the rollout gate (package rollout) which chosen clusters may take the latest
// revision now, when p's Placement rolls revisions out, and returns the pins that hold the
// others at the revision they run: p's own spec.revisionPins first (a person's pin wins), then
// the rollout's. pc has the chosen clusters' facts and the latest revision; running is what
// each runs (fanout.Running). A latest revision that is not kept goes to no cluster that runs
// another: no cluster could be held at it later (the rollout halts, saying so).
func (r *Reconciler) gate(p propagator, in *statusInput, pc percluster.Input, running map[string]fanout.Running) []flotillav1.RevisionPin {
	owner := p.owner()
	if pc.Placement.Spec.Rollout == nil {
		r.mu.Lock()
		delete(r.rollouts, owner)
		r.mu.Unlock()
		return p.spec.RevisionPins
	}
	latest, unkept := pc.Latest.Name, ""
	if latest == "" {
		latest, unkept = pc.LatestName, in.noHistory
		if unkept == "" {
			unkept = "too large to keep"
		}
	}
	r.mu.Lock()
	memory := r.rollouts[owner]
	r.mu.Unlock()
	pc.Pins = p.spec.RevisionPins
	pins, out := fanout.Gate(pc, latest, unkept, p.obj.GetAnnotations()[flotillav1.AnnotationApprove], running, in.now, memory)
	r.mu.Lock()
	r.rollouts[owner] = out.Memory
	r.mu.Unlock()
	in.rollout = out.Status
	if out.Next > 0 && (in.retryAfter == 0 || out.Next < in.retryAfter) {
		in.retryAfter = out.Next + time.Second/10
	}
	return pins
}

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
