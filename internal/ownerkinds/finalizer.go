package ownerkinds

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// FinalizerPatch says how SetFinalizer writes.
type FinalizerPatch struct {
	// Locked makes the patch fail rather than overwrite a concurrent change of the object (an
	// optimistic lock on its resourceVersion): for objects whose other finalizers are another
	// controller's.
	Locked bool
	// Also, when set, changes obj further in the same patch (what must go with the finalizer).
	Also func()
}

// SetFinalizer puts Flotilla's cleanup finalizer on an owner's hub object (want) or takes it
// off, with a merge patch of what changed, when it is not so already; obj is updated to what the
// hub returns. It reports whether it patched. Errors are the hub's, NotFound included: callers
// decide whether an object gone meanwhile matters.
func SetFinalizer(ctx context.Context, hub client.Writer, obj client.Object, want bool, how FinalizerPatch) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, flotillav1.FinalizerCleanup) == want {
		return false, nil
	}
	before := obj.DeepCopyObject().(client.Object)
	if want {
		controllerutil.AddFinalizer(obj, flotillav1.FinalizerCleanup)
	} else {
		controllerutil.RemoveFinalizer(obj, flotillav1.FinalizerCleanup)
	}
	if how.Also != nil {
		how.Also()
	}
	patch := client.MergeFrom(before)
	if how.Locked {
		patch = client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	}
	if err := hub.Patch(ctx, obj, patch); err != nil {
		return false, err
	}
	return true, nil
}
