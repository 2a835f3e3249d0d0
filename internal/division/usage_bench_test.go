package division

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkUsageOfThousandDeployments is what every pass of an owner delivering a thousand
// Deployments computes for each distinct set of objects it records (fanout's objectFacts).
func BenchmarkUsageOfThousandDeployments(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 1000)
	for i := range objs {
		objs[i] = workload("Deployment", fmt.Sprintf("dep-%05d", i), 2)
		_ = unstructured.SetNestedSlice(objs[i].Object, []any{
			map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}},
		}, "spec", "template", "spec", "containers")
	}
	b.ResetTimer()
	for range b.N {
		if u := UsageOf(objs); u["pods"] != 2000 || u["cpu"] != 200000 {
			b.Fatalf("usage %v", u)
		}
	}
}
