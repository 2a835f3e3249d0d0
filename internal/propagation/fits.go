package propagation

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// fitsOf returns what the chosen clusters are known to fit of each divided workload, by
// workload and cluster: what their records remember, and, under the Placement's
// moves.unschedulableAfter, what a copy whose pods have stayed Unschedulable that long could
// schedule (the replicas it asks for less those pods). A finding is dropped once the
// cluster's allocatable resources change (division.Fit.Holds). While a copy is short of
// Available, the pass is looked at again when its next Pending pod would cross the line.
func (r *Reconciler) fitsOf(ctx context.Context, in *statusInput, t target, have division.Replicas) map[string]map[string]division.Fit {
	out := make(map[string]map[string]division.Fit, len(have))
	for w := range have {
		out[w] = map[string]division.Fit{}
		for c, f := range ledger.RecordedFits(in.records, w) {
			if facts, chosen := t.facts[c]; chosen && f.Holds(facts.Allocatable) {
				out[w][c] = f
			}
		}
	}
	moves := t.placement.Spec.Moves
	if moves == nil || moves.UnschedulableAfter == nil || moves.UnschedulableAfter.Duration <= 0 {
		return out
	}
	after, now := moves.UnschedulableAfter.Duration, time.Now()
	workloads := make(map[string]*unstructured.Unstructured, len(have))
	for _, o := range t.rendered {
		workloads[render.Key(o)] = o
	}
	for w, byCluster := range have {
		for c, n := range byCluster {
			facts, chosen := t.facts[c]
			if n <= 0 || !chosen || workloads[w] == nil {
				continue
			}
			pending, asked, recheck, err := r.Deliverer.Unschedulable(ctx, c, workloads[w], after, now)
			if err != nil {
				// Nothing moves on a failed read; the next pass tries again.
				ctrl.LoggerFrom(ctx).Info("could not count Unschedulable pods", "cluster", c, "workload", w, "error", err.Error())
				continue
			}
			if recheck > 0 && (in.retryAfter == 0 || recheck < in.retryAfter) {
				in.retryAfter = recheck
			}
			if pending > 0 {
				// Of what the copy asks for (the cache may not show the latest write yet).
				out[w][c] = division.Fit{Replicas: max(asked-pending, 0), Allocatable: division.Usage(facts.Allocatable).ResourceList()}
			}
		}
	}
	return out
}
