package propagation

import (
	"context"

	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/fanout"
)

// fitsOf returns what the chosen clusters are known to fit of each divided workload
// (fanout.Fits), and has a copy short of Available looked at again when its next Pending pod
// would be Unschedulable for long enough.
func (r *Reconciler) fitsOf(ctx context.Context, in *statusInput, t target, have division.Replicas) map[string]map[string]division.Fit {
	room := make(map[string]map[string]int64, len(t.facts))
	for c, facts := range t.facts {
		room[c] = facts.Allocatable
	}
	fits, recheck := r.fanout.Fits(ctx, in.records, have, t.rendered, room, fanout.UnschedulableAfter(t.placement))
	if recheck > 0 && (in.retryAfter == 0 || recheck < in.retryAfter) {
		in.retryAfter = recheck
	}
	return fits
}
