package instances

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// ownerMeta is the metadata kro keeps on an instance: its labels, finalizer and ApplySet
// inventory, which shrinks once a prune has removed what it no longer lists.
func ownerMeta(instance *unstructured.Unstructured, md kro.InstanceMetadata) *deliver.OwnerMeta {
	obj := identity(instance)
	obj.SetLabels(md.Labels)
	obj.SetAnnotations(md.Annotations)
	obj.SetFinalizers([]string{md.Finalizer})
	return &deliver.OwnerMeta{Object: obj, AnnotationsAfterPrune: md.AnnotationsAfterPrune}
}

// withStatus is the instance's identity with a status to show.
func withStatus(instance *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	obj := identity(instance)
	obj.Object["status"] = status
	return obj
}

func identity(instance *unstructured.Unstructured) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(instance.GetAPIVersion())
	obj.SetKind(instance.GetKind())
	obj.SetNamespace(instance.GetNamespace())
	obj.SetName(instance.GetName())
	return obj
}

func hasFinalizer(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), kro.Finalizer)
}

// lacksMeta reports whether an instance lacks metadata the job keeps on it: a label, an
// annotation or the finalizer (the inventory may be the one before or after a prune).
func lacksMeta(instance *unstructured.Unstructured, m *deliver.OwnerMeta) bool {
	if m == nil {
		return false
	}
	for _, f := range m.Object.GetFinalizers() {
		if !slices.Contains(instance.GetFinalizers(), f) {
			return true
		}
	}
	labels := instance.GetLabels()
	for k, v := range m.Object.GetLabels() {
		if labels[k] != v {
			return true
		}
	}
	annotations := instance.GetAnnotations()
	for k := range m.Object.GetAnnotations() {
		if _, ok := annotations[k]; !ok {
			return true
		}
	}
	return false
}
