package ledger

import (
	"sort"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
)

// Shares lists divided workloads' shares on a cluster, by object (render.Key), with what the
// cluster is known to fit of them (fits, by object; may be nil), as a record holds them:
// sorted, so that an unchanged division compares equal.
func Shares(byObject map[string]int64, fits map[string]division.Fit) []flotillav1.WorkloadReplicas {
	if len(byObject) == 0 {
		return nil
	}
	out := make([]flotillav1.WorkloadReplicas, 0, len(byObject))
	for object, n := range byObject {
		r := flotillav1.WorkloadReplicas{Object: object, Replicas: int32(n)}
		if f, ok := fits[object]; ok {
			r.Fits, r.FitsAllocatable = &f.Replicas, f.Allocatable
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}

// RecordedShares returns each cluster's recorded share of one divided workload (render.Key),
// for the clusters whose record has one.
func RecordedShares(records map[string]*flotillav1.Delivery, object string) map[string]int64 {
	out := map[string]int64{}
	for cluster, rec := range records {
		for _, r := range rec.Spec.Replicas {
			if r.Object == object {
				out[cluster] = int64(r.Replicas)
			}
		}
	}
	return out
}

// RecordedFits returns what each cluster's record remembers it fits of one divided workload
// (render.Key), for the clusters whose record has a fit.
func RecordedFits(records map[string]*flotillav1.Delivery, object string) map[string]division.Fit {
	out := map[string]division.Fit{}
	for cluster, rec := range records {
		for _, r := range rec.Spec.Replicas {
			if r.Object == object && r.Fits != nil {
				out[cluster] = division.Fit{Replicas: *r.Fits, Allocatable: r.FitsAllocatable}
			}
		}
	}
	return out
}
