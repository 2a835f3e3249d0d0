package transparent

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deploymentCopy(cluster string, generation, observed, ready int64, available string) spokeCopy {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "generation": generation},
		"status": map[string]any{
			"observedGeneration": observed, "replicas": int64(2), "readyReplicas": ready, "availableReplicas": ready,
			"conditions": []any{map[string]any{"type": "Available", "status": available, "reason": "MinimumReplicas", "message": "m"}},
		},
	}}
	return spokeCopy{cluster: cluster, obj: u}
}

func TestAggregate(t *testing.T) {
	got := aggregate([]spokeCopy{deploymentCopy("a", 1, 1, 2, "True"), deploymentCopy("b", 3, 3, 2, "True"), deploymentCopy("c", 1, 1, 2, "True")}, 7, nil)
	if got["replicas"] != int64(6) || got["readyReplicas"] != int64(6) || got["observedGeneration"] != int64(7) {
		t.Fatalf("sums %v", got)
	}
	conds := got["conditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["status"] != "True" {
		t.Fatalf("conditions %v", conds)
	}

	lagging := aggregate([]spokeCopy{deploymentCopy("a", 2, 1, 1, "False"), deploymentCopy("b", 1, 1, 2, "True")}, 7, map[string]any{"observedGeneration": int64(6)})
	if lagging["observedGeneration"] != int64(6) || lagging["readyReplicas"] != int64(3) {
		t.Fatalf("lagging %v", lagging)
	}
	c := lagging["conditions"].([]any)[0].(map[string]any)
	if c["status"] != "False" || c["message"] != "a: m" {
		t.Fatalf("condition %v", c)
	}
}
