package transparent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// divide splits total replicas over n clusters: floor(total/n) each, one more for the first
// total mod n.
func divide(total int64, n int) []int64 {
	out := make([]int64, n)
	if n == 0 {
		return out
	}
	for i := range out {
		out[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			out[i]++
		}
	}
	return out
}

// withReplicas returns a copy of a rendered object with spec.replicas set, re-hashed.
func withReplicas(rendered *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	out := rendered.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, replicas, "spec", "replicas"); err != nil {
		return nil, fmt.Errorf("set spec.replicas: %w", err)
	}
	return render.Rehash(out)
}
