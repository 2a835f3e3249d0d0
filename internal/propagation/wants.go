package propagation

import (
	"maps"
	"slices"

	"github.com/flotilla-dev/flotilla/internal/ownerpass"
)

// report adds to the status input what the owner's pass did (package ownerpass): where the
// rollout stands, what each cluster got (the latest revision or the one its owner pins it to,
// its replicas of the divided workloads, its override rules), the clusters that keep what
// they have and why, and the fan-out's results.
func (in *statusInput) report(res ownerpass.Result) {
	in.rollout, in.rolloutClusters, in.rolloutStages = res.Rollout, res.RolloutClusters, res.Stages
	if res.Recheck > 0 && (in.retryAfter == 0 || res.Recheck < in.retryAfter) {
		in.retryAfter = res.Recheck
	}
	out := res.Computed
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
	synced := res.Synced
	for c, msg := range synced.Failed {
		in.clusterFailed(c, msg)
	}
	in.results, in.dropped, in.recordErr, in.held = synced.Results, synced.Leaving, res.Err, res.Held
	if synced.Stalled != "" {
		in.moveStalled = synced.Stalled
	}
	if synced.Refused != "" {
		in.pruneBlocked = synced.Refused
	}
}
