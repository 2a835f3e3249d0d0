package scheduler

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// InGroup reports whether a cluster belongs to a group of clusters given by names and a label
// selector (either matches; neither matches none). An invalid selector matches nothing: the
// API's validation makes it rare, and matching none never places more than asked.
func InGroup(names []string, selector *metav1.LabelSelector, cluster string, lbls map[string]string) bool {
	if slices.Contains(names, cluster) {
		return true
	}
	if selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	return err == nil && sel.Matches(labels.Set(lbls))
}

// TierOf returns the index and name of a cluster's tier: the first of tiers it belongs to, or
// the implicit last tier (len(tiers), "").
func TierOf(tiers []flotillav1.ClusterTier, cluster string, lbls map[string]string) (int, string) {
	for i, t := range tiers {
		if InGroup(t.ClusterNames, t.ClusterSelector, cluster, lbls) {
			return i, t.Name
		}
	}
	return len(tiers), ""
}
