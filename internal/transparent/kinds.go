package transparent

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Kinds are the kinds transparent mode propagates.
var Kinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "", Version: "v1", Kind: "ConfigMap"},
	{Group: "", Version: "v1", Kind: "Service"},
	hpaKind,
}

// Secrets are not among Kinds: watching them for the label would put every hub Secret's data
// in the controller's memory. Deliver Secrets with a Propagation.

// Delivers reports whether a hub object of one of Kinds owns copies now: labelled with
// flotilla.dev/placement, or still being cleaned up (it carries the cleanup finalizer).
func Delivers(o client.Object) bool {
	_, labelled := o.GetLabels()[flotillav1.LabelPlacement]
	return labelled || controllerutil.ContainsFinalizer(o, flotillav1.FinalizerCleanup)
}

// PlacementOf is the Placement a hub object of transparent mode uses: the one its
// flotilla.dev/placement label names, in its own namespace.
func PlacementOf(o client.Object) client.ObjectKey {
	return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[flotillav1.LabelPlacement]}
}

// OwnerOf is a hub object of transparent mode as the owner of its revisions and Delivery
// records.
func OwnerOf(o client.Object) render.Owner {
	return render.Owner{Kind: ownerKind(o.GetObjectKind().GroupVersionKind()), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// ownerKind names a kind in an owner: "Deployment.apps", "ConfigMap".
func ownerKind(gvk schema.GroupVersionKind) string { return render.OwnerKind(gvk.Group, gvk.Kind, "") }

// IsOwnerKind reports whether an owner kind belongs to transparent mode.
func IsOwnerKind(kind string) bool {
	return slices.ContainsFunc(Kinds, func(gvk schema.GroupVersionKind) bool { return ownerKind(gvk) == kind })
}
