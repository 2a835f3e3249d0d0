package fanout

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Fits returns what the chosen clusters (facts: their allocatable resources among them) are
// known to fit of each divided workload, by workload and cluster: what the owner's records
// remember, and, when after is set (moves.unschedulableAfter), what a copy whose pods have
// stayed Unschedulable that long could schedule (the replicas it asks for less those pods). A
// finding is dropped once the cluster's allocatable resources change (division.Fit.Holds).
// have is what the records say each cluster runs, rendered the owner's objects. recheck is
// when a copy short of Available should be looked at again (0: no need).
func (f *Fanout) Fits(ctx context.Context, records map[string]*flotillav1.Delivery, have division.Replicas,
	rendered []*unstructured.Unstructured, facts map[string]override.Cluster, after time.Duration) (fits map[string]map[string]division.Fit, recheck time.Duration) {
	room := make(map[string]map[string]int64, len(facts))
	for c, f := range facts {
		room[c] = f.Allocatable
	}
	fits = make(map[string]map[string]division.Fit, len(have))
	for w := range have {
		fits[w] = map[string]division.Fit{}
		for c, fit := range percluster.RecordedFits(records, w) {
			if r, chosen := room[c]; chosen && fit.Holds(r) {
				fits[w][c] = fit
			}
		}
	}
	if after <= 0 {
		return fits, 0
	}
	workloads := make(map[string]*unstructured.Unstructured, len(have))
	for _, o := range rendered {
		workloads[render.Key(o)] = o
	}
	now := time.Now()
	for w, byCluster := range have {
		for c, n := range byCluster {
			r, chosen := room[c]
			if n <= 0 || !chosen || workloads[w] == nil {
				continue
			}
			pending, asked, again, err := f.Deliverer.Unschedulable(ctx, c, workloads[w], after, now)
			if err != nil {
				// Nothing moves on a failed read; the next pass tries again.
				ctrl.LoggerFrom(ctx).Info("could not count Unschedulable pods", "cluster", c, "workload", w, "error", err.Error())
				continue
			}
			if again > 0 && (recheck == 0 || again < recheck) {
				recheck = again
			}
			if pending > 0 {
				// Of what the copy asks for (the cache may not show the latest write yet).
				fits[w][c] = division.Fit{Replicas: max(asked-pending, 0), Allocatable: division.Usage(r).ResourceList()}
			}
		}
	}
	return fits, recheck
}

// UnschedulableAfter is a Placement's moves.unschedulableAfter (0: unset).
func UnschedulableAfter(pl *flotillav1.Placement) time.Duration {
	if m := pl.Spec.Moves; m != nil && m.UnschedulableAfter != nil {
		return m.UnschedulableAfter.Duration
	}
	return 0
}
