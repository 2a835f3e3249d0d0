package percluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
)

// What the Delivery records (spec.replicas) say of divided workloads: the share Flotilla wrote
// on each cluster, and what the cluster was found to fit.

// HaveOf is what the records say each cluster runs of the divisible workloads among objs.
func HaveOf(objs []*unstructured.Unstructured, records map[string]*flotillav1.Delivery) division.Replicas {
	have := division.Replicas{}
	for w := range division.Workloads(objs) {
		have[w] = RecordedShares(records, w)
	}
	return have
}

// FitsOf is what the records remember each cluster fits of the divisible workloads among objs.
func FitsOf(objs []*unstructured.Unstructured, records map[string]*flotillav1.Delivery) map[string]map[string]division.Fit {
	fits := map[string]map[string]division.Fit{}
	for w := range division.Workloads(objs) {
		fits[w] = RecordedFits(records, w)
	}
	return fits
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
