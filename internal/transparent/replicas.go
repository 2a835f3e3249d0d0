package transparent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// withReplicas returns a copy of a rendered object with spec.replicas set, re-hashed.
func withReplicas(rendered *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	out := rendered.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, replicas, "spec", "replicas"); err != nil {
		return nil, fmt.Errorf("set spec.replicas: %w", err)
	}
	return render.Rehash(out)
}
