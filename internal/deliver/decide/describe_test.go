package decide

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDescribe(t *testing.T) {
	obj := func(apiVersion, kind, ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName("web")
		return u
	}
	cases := []struct {
		obj  *unstructured.Unstructured
		want string
	}{
		{obj("v1", "ConfigMap", "shop"), "configmap shop/web"},
		{obj("apps/v1", "Deployment", "shop"), "deployment.apps shop/web"},
		{obj("v1", "Namespace", ""), "namespace/web"},
		{obj("rbac.authorization.k8s.io/v1", "ClusterRole", ""), "clusterrole.rbac.authorization.k8s.io/web"},
	}
	for _, c := range cases {
		if got := Describe(c.obj); got != c.want {
			t.Errorf("Describe = %q, want %q", got, c.want)
		}
	}
}
