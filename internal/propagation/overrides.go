package propagation

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
)

// usersOfCluster maps a Cluster to the propagators whose overrides, division or rollout may
// depend on it.
func (r *Reconciler) usersOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	cl, _ := obj.(*flotillav1.Cluster)
	// Placements whose division follows what changed of the cluster, or that roll revisions out
	// (a rollout passes over a cluster that is not Ready).
	dividing := map[client.ObjectKey]bool{}
	var placements flotillav1.PlacementList
	if err := r.Hub.List(ctx, &placements); err == nil {
		for i := range placements.Items {
			if division.FollowsCluster(placements.Items[i].Spec, false, cl) || placements.Items[i].Spec.Rollout != nil {
				dividing[client.ObjectKeyFromObject(&placements.Items[i])] = true
			}
		}
	}
	return r.propagators(ctx, true, func(p propagator) bool { return len(p.spec.Overrides) > 0 || dividing[p.placementKey()] })
}
