package ownerkinds

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// PlacementUsers lists objects into list (with opts) from hub and returns those whose
// Placement, as placementOf says, is placement: what a change of a Placement concerns. A failed
// list returns none (a map function has no way to report it; the next change of the Placement
// maps again).
func PlacementUsers(ctx context.Context, hub client.Reader, placement client.Object, list client.ObjectList,
	placementOf func(client.Object) client.ObjectKey, opts ...client.ListOption) []client.Object {
	if err := hub.List(ctx, list, opts...); err != nil {
		return nil
	}
	key := client.ObjectKeyFromObject(placement)
	var out []client.Object
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		if o, ok := item.(client.Object); ok && placementOf(o) == key {
			out = append(out, o)
		}
		return nil
	})
	return out
}

// Requests are reconcile requests for objs, by namespace and name.
func Requests(objs []client.Object) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(objs))
	for _, o := range objs {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	}
	return out
}
