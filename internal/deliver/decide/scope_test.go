package decide

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestCheckScope(t *testing.T) {
	tenant := render.Owner{Kind: "Propagation", Namespace: "team-a", Name: "web"}
	admin := render.Owner{Kind: "ClusterPropagation", Name: "platform"}
	instance := render.Owner{Kind: "WebApp.kro.run", Namespace: "team-a", Name: "shop", Cluster: "eu-1"}
	clusterInstance := render.Owner{Kind: "Tenant.kro.run", Name: "acme", Cluster: "eu-1"}
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
		wide    bool // the strategy's ClusterWide
	}{
		{"tenant, own namespace", tenant, obj("ConfigMap", "team-a"), meta.RESTScopeNameNamespace, false, false},
		{"tenant, another namespace", tenant, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, true, false},
		{"tenant, no namespace on a namespaced kind", tenant, obj("ConfigMap", ""), meta.RESTScopeNameNamespace, true, false},
		{"tenant, cluster-scoped kind", tenant, obj("ClusterRoleBinding", ""), meta.RESTScopeNameRoot, true, false},
		// Namespaced on the hub, cluster-scoped on this spoke: the spoke's mapping decides.
		{"tenant, cluster-scoped here although it names the namespace", tenant, obj("Widget", "team-a"), meta.RESTScopeNameRoot, true, false},
		{"tenant, scope not looked up: fails closed", tenant, obj("ConfigMap", "team-a"), "", true, false},
		{"admin, cluster-scoped kind", admin, obj("ClusterRoleBinding", ""), meta.RESTScopeNameRoot, false, false},
		{"admin, any namespace", admin, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, false, false},
		{"admin, scope not looked up", admin, obj("ConfigMap", "kube-system"), "", false, false},
		{"instance, another namespace", instance, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, true, false},
		{"instance, cluster-scoped kind", instance, obj("ClusterRole", ""), meta.RESTScopeNameRoot, true, false},
		{"cluster-wide instance, another namespace", instance, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, false, true},
		{"cluster-wide instance, cluster-scoped kind", instance, obj("ClusterRole", ""), meta.RESTScopeNameRoot, false, true},
		// A cluster-scoped instance is no administrator's delivery: only cluster-wide may it deliver.
		{"cluster-scoped instance, a namespace", clusterInstance, obj("ConfigMap", "acme"), meta.RESTScopeNameNamespace, true, false},
		{"cluster-scoped instance, cluster-scoped kind", clusterInstance, obj("Namespace", ""), meta.RESTScopeNameRoot, true, false},
		{"cluster-wide cluster-scoped instance, cluster-scoped kind", clusterInstance, obj("Namespace", ""), meta.RESTScopeNameRoot, false, true},
		// ClusterWide is for owners on spokes: a hub tenant stays confined whatever it says.
		{"tenant claiming cluster-wide, another namespace", tenant, obj("ConfigMap", "kube-system"), meta.RESTScopeNameNamespace, true, true},
		{"tenant claiming cluster-wide, cluster-scoped kind", tenant, obj("ClusterRoleBinding", ""), meta.RESTScopeNameRoot, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckScope(c.owner, Strategy{ClusterWide: c.wide}, c.obj, c.scope)
			if refused := errors.Is(err, ErrOutOfScope); refused != c.refused || (err != nil) != c.refused {
				t.Fatalf("CheckScope = %v, want refused=%v", err, c.refused)
			}
		})
	}
}

// TestNamespaceRoleBindingIsReserved: no owner, not even an administrator's, delivers or adopts
// the RoleBinding that grants a namespace's identity its rights there.
func TestNamespaceRoleBindingIsReserved(t *testing.T) {
	binding := &unstructured.Unstructured{}
	binding.SetAPIVersion("rbac.authorization.k8s.io/v1")
	binding.SetKind("RoleBinding")
	binding.SetNamespace("team-a")
	binding.SetName(membership.NamespaceRoleBinding)
	for _, owner := range []render.Owner{{Kind: "Propagation", Namespace: "team-a", Name: "web"}, {Kind: "ClusterPropagation", Name: "platform"}} {
		if err := CheckScope(owner, Strategy{Conflict: flotillav1.ConflictAdopt}, binding, meta.RESTScopeNameNamespace); !errors.Is(err, ErrOutOfScope) {
			t.Errorf("%s may deliver RoleBinding %s: %v", owner, membership.NamespaceRoleBinding, err)
		}
	}
	binding.SetName("team-readers")
	if err := CheckScope(render.Owner{Kind: "Propagation", Namespace: "team-a", Name: "web"}, Strategy{}, binding, meta.RESTScopeNameNamespace); err != nil {
		t.Errorf("another RoleBinding is refused: %v", err)
	}
}
