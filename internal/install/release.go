package install

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Release removes Flotilla's cleanup finalizer from every object of the given kinds on the hub
// (Propagations, ClusterPropagations, transparent-mode objects), so they can be deleted once the
// controller is gone; other finalizers stay. What was delivered to spokes stays there,
// unmanaged. With dryRun nothing changes. progress is told of each object; it returns how many
// objects carry (or carried) the finalizer.
func Release(ctx context.Context, c client.Client, kinds []schema.GroupVersionKind, dryRun bool, progress func(string)) (int, error) {
	n := 0
	for _, gvk := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) {
				continue // a kind the hub does not serve (kro's, on a hub installed without it) has no objects
			}
			return n, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if !controllerutil.ContainsFinalizer(obj, flotillav1.FinalizerCleanup) {
				continue
			}
			n++
			what := fmt.Sprintf("%s %s", gvk.Kind, client.ObjectKeyFromObject(obj))
			if dryRun {
				progress("would release " + what)
				continue
			}
			if err := releaseOne(ctx, c, gvk, client.ObjectKeyFromObject(obj)); err != nil {
				return n, fmt.Errorf("release %s: %w", what, err)
			}
			progress("released " + what)
		}
	}
	return n, nil
}

// releaseOne removes the finalizer from one object, reading it again on a conflict: the patch
// carries the resourceVersion, so a finalizer someone else adds meanwhile is never dropped.
func releaseOne(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, key client.ObjectKey) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, key, obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		before := obj.DeepCopy()
		if !controllerutil.RemoveFinalizer(obj, flotillav1.FinalizerCleanup) {
			return nil
		}
		return c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}
