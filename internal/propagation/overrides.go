package propagation

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// usersOfCluster maps a Cluster to the propagators whose overrides may depend on it.
func (r *Reconciler) usersOfCluster(ctx context.Context, _ client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	var props flotillav1.PropagationList
	if err := r.Hub.List(ctx, &props); err == nil {
		for i := range props.Items {
			if len(props.Items[i].Spec.Overrides) > 0 {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&props.Items[i])})
			}
		}
	}
	var cprops flotillav1.ClusterPropagationList
	if err := r.Hub.List(ctx, &cprops); err == nil {
		for i := range cprops.Items {
			if len(cprops.Items[i].Spec.Overrides) > 0 {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cprops.Items[i])})
			}
		}
	}
	return reqs
}
