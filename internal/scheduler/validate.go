package scheduler

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// ValidateSelectors returns an error naming the first label selector of spec that does not
// parse (clusterSelector, a tier's or a replicas entry's), or nil. The API accepts what only a
// parse refuses (operator In without values, Exists with values, an unknown operator, a key
// that is not a label key), and an invalid selector matches nothing, so a Placement that has
// one must keep its clusters and say so rather than quietly choose fewer.
func ValidateSelectors(spec flotillav1.PlacementSpec) error {
	check := func(path string, sel *metav1.LabelSelector) error {
		if sel == nil {
			return nil
		}
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			return fmt.Errorf("%s is invalid: %w", path, err)
		}
		return nil
	}
	if err := check("spec.clusterSelector", spec.ClusterSelector); err != nil {
		return err
	}
	for i, t := range spec.Tiers {
		if err := check(fmt.Sprintf("spec.tiers[%d].clusterSelector (tier %s)", i, t.Name), t.ClusterSelector); err != nil {
			return err
		}
	}
	if spec.Replicas != nil {
		for i, c := range spec.Replicas.Clusters {
			if err := check(fmt.Sprintf("spec.replicas.clusters[%d].clusterSelector (entry %s)", i, c.Name), c.ClusterSelector); err != nil {
				return err
			}
		}
	}
	return nil
}
