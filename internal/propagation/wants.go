package propagation

import (
	"context"
	"maps"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// gather completes what the per-cluster computation reads of a pass (package percluster):
// the chosen clusters' facts, the revisions pins hold clusters at (loaded from store), and
// what the records say each cluster runs of the divided workloads.
func gather(ctx context.Context, hub client.Reader, store *revisions.Store, pc *percluster.Input, records map[string]*flotillav1.Delivery) {
	if pc.Facts == nil {
		pc.Facts = fanout.Facts(ctx, hub, pc.Chosen)
	}
	pc.Pinned = store.Pinned(ctx, pc.Owner, pc.Pins, pc.LatestName)
	pc.Have = percluster.HaveOf(pc.Latest.Objects, records)
}

// wants returns what each chosen cluster should have (percluster.Compute, run by the fanout):
// the latest revision or the one its owner pins it to (spec.revisionPins), its replicas of the
// workloads its Placement divides, and its override rules. A cluster whose pinned revision is
// gone or whose rules fail is left out (it keeps what it has) and reported.
func (r *Reconciler) wants(ctx context.Context, in *statusInput, pc percluster.Input) map[string]fanout.Want {
	gather(ctx, r.Hub, r.Revisions, &pc, in.records)
	if pc.Divides() {
		// Read before any admission: it may ask the spokes, and admissions wait for each other.
		var recheck time.Duration
		pc.Fits, recheck = r.fanout.Fits(ctx, in.records, pc.Have, pc.Latest.Objects, pc.Facts, fanout.UnschedulableAfter(pc.Placement))
		if recheck > 0 && (in.retryAfter == 0 || recheck < in.retryAfter) {
			in.retryAfter = recheck
		}
	}
	out, err := r.fanout.Wants(ctx, pc)
	if err != nil {
		for _, c := range pc.Chosen {
			in.clusterFailed(c, err.Error()) // every cluster keeps what it has
		}
		return map[string]fanout.Want{}
	}
	for _, w := range slices.Sorted(maps.Keys(out.Unplaced)) {
		in.unplaced = append(in.unplaced, w+": "+out.Unplaced[w])
	}
	in.divisions, in.moveStalled = out.Reports, out.Stalled
	for c, msg := range out.Failed {
		in.clusterFailed(c, msg) // this cluster keeps what it has; the others carry on
	}
	for c, w := range out.Want {
		if w.Revision != in.revision {
			in.clusterRevision(c, w.Revision)
		}
	}
	return out.Want
}
