package fleetapi

import (
	"cmp"
	"context"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/render"
)

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
			out[p.want.Revision] = cmp.Or(p.pinned, latest)
		}
	}
	return out
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
