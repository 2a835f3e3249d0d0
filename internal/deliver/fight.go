package deliver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
)

// Fights (someone on the cluster changing an object back after every correction) are judged
// by package observe; here the deliverer names who made a drift, holds a correction that must
// wait, and reports fights in results and through Options.OnDrift.

// held decides whether the correction d of an object may be made now. If so it fills in who
// made the drift, unless d names it, and returns nil. If the object's corrections are backing
// off, the object is looked at again when the wait ends and the drift is returned as held, for
// the delivery to leave as it is.
func (w *clusterWorker) held(ctx context.Context, cl cluster.Cluster, owner pairKey, key, hash string, desired *unstructured.Unstructured, d *Drift) *Drift {
	wait, known := w.seen.Undone(key, hash)
	if !d.Deleted && d.Manager == "" {
		d.Manager = known.Manager
		if d.Manager == "" || !observe.SameFields(known.Fields, d.Fields) {
			d.Manager = w.managerOf(ctx, cl, desired, d.Fields)
		}
	}
	if wait == 0 {
		return nil
	}
	w.seen.Hold(owner, key, hash, *d)
	w.queue.AddAfter(owner, wait)
	h := *d
	h.Corrected, h.Held = false, true
	return &h
}

// corrected records the correction d of an object, just written.
func (w *clusterWorker) corrected(owner pairKey, key, hash string, d *Drift) {
	w.seen.Corrected(owner, key, hash, d, w.wanted)
	if took, ok := w.drifts.reverted(owner, key, time.Now()); ok {
		driftReverted.Observe(took.Seconds())
	}
}

// reportFights completes a delivery's result with the objects of its owner that are fighting,
// reports each new fight through OnDrift, and makes sure the owner is looked at again when a
// fight may end, so that its report ends too.
func (w *clusterWorker) reportFights(job Job, ids []observe.Object, res *Result) {
	fighting, news, settles := w.seen.Fights(job.Owner, ids)
	if !settles.IsZero() {
		w.queue.AddAfter(job.Owner, time.Until(settles))
	}
	if w.d.opts.OnDrift != nil {
		for _, d := range news {
			w.d.opts.OnDrift(job.Owner, w.name, d)
		}
	}
	res.Fighting = len(fighting)
	if len(fighting) > maxDriftDetails {
		fighting = fighting[:maxDriftDetails]
	}
	if len(fighting) > 0 {
		res.FightingObjects = fighting
	}
}
