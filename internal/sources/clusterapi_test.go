package sources

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestProvisioned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   bool
	}{
		{"no status", nil, false},
		{"provisioned", map[string]any{"phase": "Provisioned"}, true},
		{"provisioning", map[string]any{"phase": "Provisioning", "controlPlaneReady": true}, false},
		{"deleting", map[string]any{"phase": "Deleting"}, false},
		{"failed", map[string]any{"phase": "Failed"}, false},
		{"v1beta2 without phase", map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}, true},
		{"v1beta2 not initialized", map[string]any{"initialization": map[string]any{"infrastructureProvisioned": true}}, false},
		{"v1beta1 without phase", map[string]any{"controlPlaneReady": true}, true},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if tc.status != nil {
			u.Object["status"] = tc.status
		}
		if got := provisioned(u); got != tc.want {
			t.Errorf("%s: provisioned = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIsCAPILabel(t *testing.T) {
	for key, want := range map[string]bool{
		"cluster.x-k8s.io/cluster-name":   true,
		"topology.cluster.x-k8s.io/owned": true,
		"region":                          false,
		"example.com/cluster.x-k8s.io":    false,
		"notcluster.x-k8s.io/x":           false,
	} {
		if got := isCAPILabel(key); got != want {
			t.Errorf("isCAPILabel(%q) = %v, want %v", key, got, want)
		}
	}
}
