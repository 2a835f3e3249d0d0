package sources

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestProfileLabels(t *testing.T) {
	cp := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"properties": []any{
		map[string]any{"name": "topology.kubernetes.io/region", "value": "eu-west-1"},
		map[string]any{"name": "clusterset.k8s.io", "value": "fleet-1"},
		map[string]any{"name": "tier", "value": "from-property"},
		map[string]any{"name": "not a label name", "value": "x"},
		map[string]any{"name": "location", "value": "Paris, France"},
		map[string]any{"name": "flotilla.dev/cluster-id", "value": "forged"},
	}}}}
	cp.SetLabels(map[string]string{"tier": "gold", "x-k8s.io/cluster-manager": "ocm"})
	want := map[string]string{
		"topology.kubernetes.io/region": "eu-west-1",
		"clusterset.k8s.io":             "fleet-1",
		"tier":                          "gold",
		"x-k8s.io/cluster-manager":      "ocm",
	}
	if got := profileLabels(cp); !reflect.DeepEqual(got, want) {
		t.Errorf("profileLabels = %v, want %v", got, want)
	}
}

func TestUnhealthy(t *testing.T) {
	for status, want := range map[string]bool{"True": false, "False": true, "Unknown": false, "": false} {
		cp := &unstructured.Unstructured{Object: map[string]any{}}
		if status != "" {
			cp.Object["status"] = map[string]any{"conditions": []any{
				map[string]any{"type": "Other", "status": "False"},
				map[string]any{"type": ConditionControlPlaneHealthy, "status": status},
			}}
		}
		if got := unhealthy(cp); got != want {
			t.Errorf("ControlPlaneHealthy=%q: unhealthy = %v, want %v", status, got, want)
		}
	}
}
