package ledger

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Clusters are the clusters records name, sorted.
func Clusters(records map[string]*flotillav1.Delivery) []string {
	out := make([]string, 0, len(records))
	for c := range records {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Changed passes what an owner's controller must act on: a record deleted by someone else
// (written again). The ledger's own writes do not pass; nothing else writes records.
func Changed() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// Pulled passes, besides Changed, a record of a cluster an agent delivers to (agents: a pull
// cluster, or any cluster of a sharded hub) whose status changed: its agent's result, which the
// work endpoint writes (WriteReported) on whichever hub replica took it, and which the owner's
// controller counts the cluster from. The ledger's own status writes are of push clusters and
// do not pass, so a push fleet costs no more reconciles than before.
func Pulled(agents Agents) predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*flotillav1.Delivery)
			after, ok2 := e.ObjectNew.(*flotillav1.Delivery)
			if !ok1 || !ok2 || equality.Semantic.DeepEqual(before.Status, after.Status) {
				return false
			}
			return agents.Deliver(context.Background(), after.Spec.Cluster)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// OwnerRequests maps a record to a request for its owner, for the owners mine accepts.
func OwnerRequests(mine func(flotillav1.DeliveryOwner) bool) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		d, ok := obj.(*flotillav1.Delivery)
		if !ok || !mine(d.Spec.Owner) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: d.Spec.Owner.Namespace, Name: d.Spec.Owner.Name}}}
	}
}
