package fanout

import (
	"context"
	"fmt"
	"time"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/rollout"
)

// Running is which of an owner's revisions a cluster runs, and how that went.
type Running struct {
	// Revision is the owner's revision the cluster's objects are made from, as its record
	// says (spec.work; what this process recorded last, ahead of the record's write).
	Revision string
	// Ready says the deliverer found the cluster's objects of Revision applied and Ready at
	// the generation written; Failed says why their delivery failed in a way the cluster will
	// repeat (invalid, forbidden, too large; "" when it did not).
	Ready  bool
	Failed string
	// Unreachable says why the deliverer could not reach the cluster at its latest delivery of
	// Revision ("" when it could).
	Unreachable string
}

// Running says which of owner's revisions each of clusters runs (clusters without a record
// naming one are left out).
func (f *Fanout) Running(owner render.Owner, records map[string]*flotillav1.Delivery, clusters []string) map[string]Running {
	out := make(map[string]Running, len(clusters))
	for _, c := range clusters {
		f.mu.Lock()
		w, known := f.work[workKey{owner, c}]
		f.mu.Unlock()
		if rec := records[c]; !known && rec != nil && rec.Spec.Work != nil {
			w = *rec.Spec.Work
		}
		if w.Revision == "" {
			continue
		}
		run := Running{Revision: w.Revision}
		if f.Agents.Deliver(context.Background(), c) {
			run = recordedRun(records[c], w) // what its agent last reported (pull.go)
		} else if res, ok := f.Deliverer.Result(owner, c); ok && res.Revision == w.Digest {
			run.Ready = res.ReadyAt(w.Digest)
			if res.Failed > 0 && res.Permanent {
				run.Failed = res.Message // one the spoke repeats; a passing failure is not
			}
			if res.Disconnected {
				run.Unreachable = "not connected"
			}
		} else if !ok {
			run = recordedRun(records[c], w) // no delivery yet since a restart: the record says
		}
		out[c] = run
	}
	return out
}

// RecordedRunning is Running as the records alone say it (spec.work, and the latest result
// in their status): what `flotilla plan` sees.
func RecordedRunning(records map[string]*flotillav1.Delivery, clusters []string) map[string]Running {
	out := make(map[string]Running, len(clusters))
	for _, c := range clusters {
		if rec := records[c]; rec != nil && rec.Spec.Work != nil && rec.Spec.Work.Revision != "" {
			out[c] = recordedRun(rec, *rec.Spec.Work)
		}
	}
	return out
}

// recordedRun is what a record says of the cluster's run of w: Ready when its latest complete
// delivery was of w's objects with every object ready.
func recordedRun(rec *flotillav1.Delivery, w flotillav1.DeliveryWork) Running {
	return Running{Revision: w.Revision, Ready: recordedReadyAt(rec, w.Digest)}
}

// Gate runs the rollout gate (package rollout) for pc's pass over the chosen clusters no
// person pins (pc.Pins): in says the revision rolling out, the owner's controls (approval,
// undo), the time and what the gate remembered; running is what each cluster runs. It returns
// pc.Pins followed by the rollout's holds (a person's pin wins: PinOf takes the first), and the
// gate's outcome.
func Gate(pc percluster.Input, in rollout.Input, running map[string]Running) ([]flotillav1.RevisionPin, rollout.Outcome) {
	if in.Policy == nil {
		in.Policy = pc.Placement.Spec.Rollout
	}
	in.Clusters = make([]rollout.Cluster, 0, len(pc.Chosen))
	for _, c := range pc.Chosen {
		if flotillav1.PinOf(pc.Pins, c) != "" {
			continue // a person holds it: not the rollout's
		}
		run := running[c]
		unreachable := pc.Facts[c].Unreachable
		if unreachable == "" {
			unreachable = run.Unreachable
		}
		in.Clusters = append(in.Clusters, rollout.Cluster{Name: c, Labels: pc.Facts[c].Labels, Runs: run.Revision, Ready: run.Ready, Failed: run.Failed,
			Unreachable: unreachable})
	}
	out := rollout.Gate(in)
	pins := append([]flotillav1.RevisionPin(nil), pc.Pins...)
	for _, c := range pc.Chosen {
		if rev, held := out.Hold[c]; held {
			pins = append(pins, flotillav1.RevisionPin{Cluster: c, Revision: rev})
		}
	}
	return pins, out
}

// PlannedGate is Gate as `flotilla plan` runs it, when pc's Placement rolls revisions out:
// what each cluster runs as the plan read it (the records alone say it: RecordedRunning; a
// fleet API's CRDs), nothing remembered (a stage that is done shows its soak as just begun);
// controls carries the owner's approval and undo. hold says where a rollout under way stands
// ("" when none is).
func PlannedGate(pc percluster.Input, controls rollout.Input, running map[string]Running) (pins []flotillav1.RevisionPin, hold string) {
	if pc.Placement.Spec.Rollout == nil {
		return pc.Pins, ""
	}
	controls.Latest, controls.Now = pc.LatestName, time.Now()
	pins, out := Gate(pc, controls, running)
	if s := out.Status; s != nil && s.Phase != flotillav1.RolloutComplete {
		hold = fmt.Sprintf("rollout of revision %s: %s: %s", s.Revision, s.Phase, s.Message)
	}
	return pins, hold
}
