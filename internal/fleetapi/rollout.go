package fleetapi

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// An RGD's revisions roll out as every owner's do (docs/rollouts.md): when the APIPropagation's
// Placement has spec.rollout, the rollout gate (ownerpass.Runner.Gate, with its memory, undo and
// pause) says, from what each chosen cluster serves (read before anything is compiled), which
// may take the newest revision now; the others are planned with the revision they serve as
// their pin: their CRD stays as it is and their instances keep expanding with the graph of that
// revision. The rollout's controls, flotilla.dev/approve and flotilla.dev/undo, are read from
// the RGD alone.

// factsTimeout bounds the read of the chosen Clusters' facts (labels a stage selects,
// reachability) for the gate.
const factsTimeout = 10 * time.Second

// latestName is the name of the RGD's newest revision: newest's, or, without a store, the name
// it would have, so that the gate can tell it from what clusters serve.
func latestName(rgd *kro.ResourceGraphDefinition, owner render.Owner, newest rgdRevision) string {
	if newest.name != "" {
		return newest.name
	}
	if _, hash, err := revisionObject(rgd); err == nil {
		return revisions.Name(owner, hash)
	}
	return ""
}

// gateRollout runs the rollout gate over what an RGD's chosen clusters serve and returns the
// pins it honours: the APIPropagation's, then the rollout's. notKept says why the newest
// revision is not kept ("" when it is): the rollout then halts.
func (r *Reconciler) gateRollout(ctx context.Context, rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation, placement *flotillav1.Placement,
	owner ledger.Owner, latest, notKept string, targets []string, reads map[string]clusterRead) ([]flotillav1.RevisionPin, ownerpass.Result) {
	in := percluster.Input{Owner: owner.Owner, Placement: placement, Chosen: targets, Pins: pinsFor(placer, rgd.Name, targets), LatestName: latest}
	if notKept == "" {
		in.Latest.Name = latest
	}
	factsCtx, cancel := context.WithTimeout(ctx, factsTimeout)
	in.Facts = fanout.Facts(factsCtx, r.Hub, targets)
	cancel()
	carried := func(revision string) (string, bool) { return r.carried.get(rgd.Name, revision) }
	running := servedRunning(reads, carried, func(c string) (deliver.Result, bool) { return r.Deliverer.Result(owner.Owner, c) })
	pass := ownerpass.Pass{Owner: owner, Object: rgd, Placement: placement, Pins: in.Pins,
		Approved: rgd.Annotations[flotillav1.AnnotationApprove], Undo: rgd.Annotations[flotillav1.AnnotationUndo]}
	pins, res := r.passes.Gate(ctx, pass, in, running, notKept)
	if res.RolloutChanged && res.Rollout != nil {
		r.reportRollout(rgd, res.Rollout)
	}
	ownerpass.ReportStages(r.drift.Recorder, rgd, res.Stages)
	return pins, res
}

// planPins plans each read cluster once: with the APIPropagation's pin of it (personal), the
// newest revision (latest) otherwise, unless the pins the gate honours (the person's, then the
// rollout's) hold it at another revision: then with that one, held by the rollout.
func (r *Reconciler) planPins(ctx context.Context, reads map[string]clusterRead, newest rgdRevision, latest string, owner render.Owner,
	pins []flotillav1.RevisionPin, personal func(cluster string) string, pull pullPass) map[string]clusterPlan {
	plans := make(map[string]clusterPlan, len(reads))
	for c, read := range reads {
		pin, planned := personal(c), latest
		if pin != "" && pin != newest.name {
			planned = pin
		}
		held := flotillav1.PinOf(pins, c)
		rollout := held != "" && held != planned
		if rollout {
			pin = held
		}
		p := r.planRead(ctx, read, newest, owner, pin, pull)
		if rollout {
			p.rolloutHeld = held
		}
		plans[c] = p
	}
	return plans
}

// carriedBy is, by the revision of each plan's delivery, the RGD revision it carries: what the
// next pass's servedRunning matches the deliverer's results against.
func carriedBy(plans map[string]clusterPlan, latest string) map[string]string {
	out := map[string]string{}
	for _, p := range plans {
		if p.want != nil {
			out[p.want.Revision] = plannedWith(p, latest)
		}
	}
	return out
}

// pinsFor are the revisions the APIPropagation pins the RGD's chosen clusters to.
func pinsFor(placer *flotillav1.APIPropagation, rgd string, targets []string) []flotillav1.RevisionPin {
	var out []flotillav1.RevisionPin
	for _, c := range targets {
		if pin := placer.Spec.PinOf(rgd, c); pin != "" {
			out = append(out, flotillav1.RevisionPin{Cluster: c, Revision: pin})
		}
	}
	return out
}

// plannedWith is the revision a cluster was planned with: its pin, or the newest.
func plannedWith(p clusterPlan, newest string) string {
	if p.pinned != "" {
		return p.pinned
	}
	return newest
}

// servedRunning is what each read cluster runs of the RGD, for the rollout gate: the revision
// the deliverer's latest result carries, when an earlier pass's plan delivered it (carried; Ready
// when the delivery is complete and Established; Failed when it failed in a way the cluster
// repeats), and otherwise the revision its CRD names, Ready when that CRD is Established. A
// cluster that serves none is left out.
func servedRunning(reads map[string]clusterRead, carried func(revision string) (string, bool), result func(cluster string) (deliver.Result, bool)) map[string]fanout.Running {
	out := map[string]fanout.Running{}
	for c, read := range reads {
		p := read.plan
		res, ok := result(c)
		name, known := "", false
		if ok && res.Revision != "" {
			name, known = carried(res.Revision)
		}
		var run fanout.Running
		switch {
		case known:
			run = fanout.Running{Revision: name, Ready: res.ReadyAt(res.Revision)}
			if res.Failed > 0 && res.Permanent {
				run.Failed = res.Message
			}
		case p.served != "":
			run = fanout.Running{Revision: p.served, Ready: p.row.ServedGeneration > 0}
		default:
			continue
		}
		if ok && res.Disconnected {
			run.Unreachable = "not connected"
		}
		out[c] = run
	}
	return out
}

// reportRollout says on the RGD that its rollout's phase or revision changed.
func (r *Reconciler) reportRollout(rgd *kro.ResourceGraphDefinition, s *flotillav1.RolloutStatus) {
	if r.drift.Recorder == nil {
		return
	}
	kind := corev1.EventTypeNormal
	if s.Phase == flotillav1.RolloutHalted {
		kind = corev1.EventTypeWarning
	}
	r.drift.Recorder.Event(rgd, kind, "Rollout"+string(s.Phase), limit("revision "+s.Revision+": "+s.Message))
}
