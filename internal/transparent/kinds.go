package transparent

import "k8s.io/apimachinery/pkg/runtime/schema"

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

// ownerKind names a kind in an owner: "Deployment.apps", "ConfigMap".
func ownerKind(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// IsOwnerKind reports whether an owner kind belongs to transparent mode.
func IsOwnerKind(kind string) bool {
	for _, gvk := range Kinds {
		if ownerKind(gvk) == kind {
			return true
		}
	}
	return false
}
