package propagation

import (
	"maps"
	"slices"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
)

// took adds to the status input what the owner's pass did (package ownerpass): the hold that
// stopped it, or where the rollout stands, what each cluster got (the latest revision or the
// one its owner pins it to, its replicas of the divided workloads, its override rules), the
// clusters that keep what they have and why, and the fan-out's results.
func (in *statusInput) took(res ownerpass.Result) {
	if h := res.Hold; h != nil {
		in.hold = &holdReason{h.Reason, h.Message}
		if h.Reason == flotillav1.ReasonPruneBlocked {
			in.pruneBlocked = h.Message
		}
		return
	}
	in.rollout, in.rolloutClusters = res.Rollout, res.RolloutClusters
	if res.Recheck > 0 && (in.retryAfter == 0 || res.Recheck < in.retryAfter) {
		in.retryAfter = res.Recheck
	}
	out := res.Computed
	for _, w := range slices.Sorted(maps.Keys(out.Unplaced)) {
		in.unplaced = append(in.unplaced, w+": "+out.Unplaced[w])
	}
	in.divisions, in.moveStalled = out.Reports, out.Stalled
	synced := res.Synced
	// A cluster that failed keeps what it has; the others carry on.
	in.clusterErrors, in.revisions = map[string]string{}, map[string]string{}
	maps.Copy(in.clusterErrors, out.Failed)
	maps.Copy(in.clusterErrors, synced.Failed)
	for c, w := range out.Want {
		if w.Revision != in.revision {
			in.revisions[c] = w.Revision
		}
	}
	in.results, in.dropped, in.recordErr, in.held = synced.Results, synced.Leaving, res.Err, res.Held
	if synced.Stalled != "" {
		in.moveStalled = synced.Stalled
	}
	if synced.Refused != "" {
		in.pruneBlocked = synced.Refused
	}
}
