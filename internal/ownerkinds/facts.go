package ownerkinds

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// FactsChanged passes the Cluster events that change what rules and divisions see of a
// cluster: its labels, its allocatable capacity, its placement limits, and what is placed on
// it when it has limits (room freed by one owner is taken up by another that could not place
// everything), and whether it is Ready (a rollout passes over a cluster it cannot reach, and
// lets it through when it returns).
func FactsChanged() predicate.Predicate {
	return predicate.Or(predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, okO := e.ObjectOld.(*flotillav1.Cluster)
		n, okN := e.ObjectNew.(*flotillav1.Cluster)
		if !okO || !okN {
			return false
		}
		eq := equality.Semantic.DeepEqual
		return !eq(o.Status.Allocatable, n.Status.Allocatable) || !eq(o.Spec.PlacementLimits, n.Spec.PlacementLimits) ||
			(len(n.Spec.PlacementLimits) > 0 && !eq(o.Status.Placed, n.Status.Placed)) ||
			meta.IsStatusConditionTrue(o.Status.Conditions, flotillav1.ClusterReady) != meta.IsStatusConditionTrue(n.Status.Conditions, flotillav1.ClusterReady)
	}})
}
