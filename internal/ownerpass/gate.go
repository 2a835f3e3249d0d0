package ownerpass

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/hubmetrics"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// remembered is what the gate remembers of one owner's rollout, and what it last reported.
type remembered struct {
	memory   rollout.Memory
	phase    flotillav1.RolloutPhase
	revision string
	seen     bool
	// undo is the flotilla.dev/undo the runner set on the owner (onFailure: Rollback) at
	// undoAt, until the owner read shows it.
	undo   string
	undoAt time.Time
}

// undoLag is how long an undo the runner set is trusted over an owner read that does not show
// it yet (the hub cache lags behind the write).
const undoLag = 30 * time.Second

// gate asks the rollout gate (package rollout) which chosen clusters may take the owner's
// latest revision now, when its Placement rolls revisions out, and returns the pins that hold
// the others at the revision they run: the owner's own pins first (a person's pin wins), then
// the rollout's. A latest revision that is not kept goes to no cluster that runs another: no
// cluster could be held at it later (the rollout halts, saying so).
func (r *Runner) gate(ctx context.Context, p Pass, in percluster.Input, running map[string]fanout.Running, res *Result) []flotillav1.RevisionPin {
	owner := in.Owner
	if p.Placement.Spec.Rollout == nil {
		r.Forget(owner)
		return p.Pins
	}
	latest, unkept := in.Latest.Name, ""
	if latest == "" {
		latest, unkept = in.LatestName, res.NoHistory
		if unkept == "" {
			unkept = "too large to keep"
		}
	}
	last, now := r.remembered(owner), time.Now()
	undo := p.Undo
	if _, revision, ok := flotillav1.ParseUndo(undo); ok && revision != latest {
		// Spent: the owner changed since. Taken off, so that the same content coming back
		// later (the same revision) is rolled out, not undone at once.
		res.Err = errors.Join(res.Err, r.setUndo(ctx, p, ""))
		undo = ""
	}
	if _, revision, _ := flotillav1.ParseUndo(last.undo); revision == latest && undo != last.undo && now.Sub(last.undoAt) < undoLag {
		undo = last.undo // set moments ago: the owner as read may not show it yet
	}
	in.Pins = p.Pins
	pins, out := fanout.Gate(in, rollout.Input{Policy: policyOf(p), Latest: latest, Unkept: unkept, Approved: p.Approved, Undo: undo,
		Now: now, Memory: last.memory}, running)
	next := remembered{memory: out.Memory, seen: true}
	switch {
	case out.Undo != "" && out.Undo != undo:
		// onFailure: Rollback. Held in this pass already; the annotation keeps it held, in
		// sight of whoever reads the owner, after a restart too.
		res.Err = errors.Join(res.Err, r.setUndo(ctx, p, out.Undo))
		next.undo, next.undoAt = out.Undo, now
	case undo == last.undo && p.Undo != last.undo:
		next.undo, next.undoAt = last.undo, last.undoAt
	}
	if last.seen {
		// With nothing remembered (a restart), stages found started or done were reported before.
		res.Stages = rollout.Changes(last.memory, out.Memory)
		for _, c := range res.Stages {
			if c.Complete && c.Took > 0 {
				hubmetrics.ObserveRolloutStage(owner.Kind, c.Took)
			}
		}
	}
	if s := out.Status; s != nil {
		res.RolloutClusters = out.Clusters
		next.phase, next.revision = s.Phase, s.Revision
		// A rollout found complete with nothing remembered (after a restart) was reported before.
		res.RolloutChanged = (s.Phase != last.phase || s.Revision != last.revision) && !(!last.seen && s.Phase == flotillav1.RolloutComplete)
	}
	r.mu.Lock()
	if r.rollouts == nil {
		r.rollouts = map[render.Owner]remembered{}
	}
	r.rollouts[owner] = next
	r.mu.Unlock()
	res.Rollout = out.Status
	if out.Next > 0 {
		res.Recheck = earliest(res.Recheck, out.Next+time.Second/10)
	}
	return pins
}

// setUndo sets flotilla.dev/undo on the owner object, or takes it off ("").
func (r *Runner) setUndo(ctx context.Context, p Pass, value string) error {
	if p.Object == nil {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationUndo, value)
	if value == "" {
		patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, flotillav1.AnnotationUndo)
	}
	if err := r.Hub.Patch(ctx, p.Object, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("set %s=%q on %s: %w", flotillav1.AnnotationUndo, value, p.Owner.Owner, err)
	}
	return nil
}

func (r *Runner) remembered(owner render.Owner) remembered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rollouts[owner]
}

// policyOf is the rollout policy of the owner's pass: its Placement's, paused when the owner
// pauses its own rollout.
func policyOf(p Pass) *flotillav1.RolloutPolicy {
	policy := p.Placement.Spec.Rollout
	if policy == nil || !p.Paused || policy.Paused {
		return policy
	}
	paused := *policy
	paused.Paused = true
	return &paused
}
