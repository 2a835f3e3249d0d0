package deliver

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
		ok              bool
	}{
		{"app", "team", true},
		{"system:controller:x", "", true}, // RBAC names are path segments, not DNS names
		{"../x", "team", false},
		{"a/b", "team", false},
		{"%2e%2e", "team", false},
		{"..", "team", false},
		{".", "", false},
		{"app", "../kube-system", false},
		{"app", "Team", false},
		{"app", "a/b", false},
	} {
		o := &unstructured.Unstructured{}
		o.SetKind("ConfigMap")
		o.SetName(tc.name)
		o.SetNamespace(tc.namespace)
		err := checkName(o)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errInvalidName)) {
			t.Errorf("%q in %q: %v", tc.name, tc.namespace, err)
		}
		if err != nil && !permanent(err) {
			t.Errorf("%q in %q: retried as if the cluster might accept it later", tc.name, tc.namespace)
		}
	}
}
