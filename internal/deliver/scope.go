package deliver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scopeOf is the scope of an object's kind on a cluster, from that cluster's REST mapping: the
// input of the tenancy rule (decide.CheckScope), which a kind's scope on the hub cannot answer.
func scopeOf(mapper meta.RESTMapper, obj *unstructured.Unstructured) (meta.RESTScopeName, error) {
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	return m.Scope.Name(), nil
}
