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
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// An RGD's revisions roll out as every owner's do (docs/rollouts.md): when the APIPropagation's
// Placement has spec.rollout, the rollout gate (ownerpass.Runner.Gate, with its memory, undo and
// pause) says which chosen clusters may take the newest revision now, and the others are
// planned again with the revision they serve as their pin: their CRD stays as it is and their
// instances keep expanding with the graph of that revision. The rollout's controls,
// flotilla.dev/approve and flotilla.dev/undo, are read from the RGD alone.

// factsTimeout bounds the read of the chosen Clusters' facts (labels a stage selects,
// reachability) for the gate.
const factsTimeout = 10 * time.Second

// gateRollout runs the rollout gate over the first plans of an RGD's chosen clusters (person
// pins only) and plans again each cluster it holds at another revision than the one it was
// planned with. notKept says why the newest revision is not kept ("" when it is): the rollout
// then halts.
func (r *Reconciler) gateRollout(ctx context.Context, rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation, placement *flotillav1.Placement,
	owner ledger.Owner, newest rgdRevision, notKept string, targets []string, plans map[string]clusterPlan, pull pullPass) ownerpass.Result {
	latest := newest.name
	if latest == "" { // no store: named all the same, so that the gate can tell it from what clusters serve
		if _, hash, err := revisionObject(rgd); err == nil {
			latest = revisions.Name(owner.Owner, hash)
		}
	}
	in := percluster.Input{Owner: owner.Owner, Placement: placement, Chosen: targets, Pins: pinsFor(placer, rgd.Name, targets), LatestName: latest}
	if notKept == "" {
		in.Latest.Name = latest
	}
	factsCtx, cancel := context.WithTimeout(ctx, factsTimeout)
	in.Facts = fanout.Facts(factsCtx, r.Hub, targets)
	cancel()
	running := servedRunning(plans, latest, func(c string) (deliver.Result, bool) { return r.Deliverer.Result(owner.Owner, c) })
	pass := ownerpass.Pass{Owner: owner, Object: rgd, Placement: placement, Pins: in.Pins,
		Approved: rgd.Annotations[flotillav1.AnnotationApprove], Undo: rgd.Annotations[flotillav1.AnnotationUndo]}
	pins, res := r.passes.Gate(ctx, pass, in, running, notKept)
	for _, c := range targets {
		held := flotillav1.PinOf(pins, c)
		if held == "" || held == plannedWith(plans[c], latest) {
			continue
		}
		p := r.planCluster(ctx, newest, owner.Owner, c, held, pull)
		p.rolloutHeld = held
		plans[c] = p
	}
	if res.RolloutChanged && res.Rollout != nil {
		r.reportRollout(rgd, res.Rollout)
	}
	ownerpass.ReportStages(r.drift.Recorder, rgd, res.Stages)
	return res
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

// servedRunning is what each planned cluster runs of the RGD, for the rollout gate: the
// revision it was planned with once the deliverer's latest result is of that plan's CRD
// (Ready when it is complete and Established; Failed when it failed in a way the cluster
// repeats), and otherwise the revision its CRD names, Ready when that CRD is Established.
// A cluster that serves none is left out.
func servedRunning(plans map[string]clusterPlan, newest string, result func(cluster string) (deliver.Result, bool)) map[string]fanout.Running {
	out := map[string]fanout.Running{}
	for c, p := range plans {
		res, ok := result(c)
		var run fanout.Running
		switch {
		case ok && p.want != nil && res.Revision == p.want.Revision:
			run = fanout.Running{Revision: plannedWith(p, newest), Ready: res.ReadyAt(p.want.Revision)}
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
