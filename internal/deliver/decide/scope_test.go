package decide

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestCheckScope(t *testing.T) {
	tenant := render.Owner{Kind: "Propagation", Namespace: "team-a", Name: "web"}
	admin := render.Owner{Kind: "ClusterPropagation", Name: "platform"}
	obj := func(kind, ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName("x")
		u.SetNamespace(ns)
		return u
	}
	cases := []struct {
		name    string
		owner   render.Owner
		obj     *unstructured.Unstructured
		scope   meta.RESTScopeName
		refused bool
	}{
		{"tenant, own namespace", tenant, obj("ConfigMap", "team-a"), meta.RESTScopeNameNamespace, false},
		{"tenant, another namespace", tenant, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, true},
		{"tenant, no namespace on a namespaced kind", tenant, obj("ConfigMap", ""), meta.RESTScopeNameNamespace, true},
		{"tenant, cluster-scoped kind", tenant, obj("ClusterRoleBinding", ""), meta.RESTScopeNameRoot, true},
		// Namespaced on the hub, cluster-scoped on this spoke: the spoke's mapping decides.
		{"tenant, cluster-scoped here although it names the namespace", tenant, obj("Widget", "team-a"), meta.RESTScopeNameRoot, true},
		{"tenant, scope not looked up: fails closed", tenant, obj("ConfigMap", "team-a"), "", true},
		{"admin, cluster-scoped kind", admin, obj("ClusterRoleBinding", ""), meta.RESTScopeNameRoot, false},
		{"admin, any namespace", admin, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, false},
		{"admin, scope not looked up", admin, obj("ConfigMap", "kube-system"), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckScope(c.owner, c.obj, c.scope)
			if refused := errors.Is(err, ErrOutOfScope); refused != c.refused || (err != nil) != c.refused {
				t.Fatalf("CheckScope = %v, want refused=%v", err, c.refused)
			}
		})
	}
}
