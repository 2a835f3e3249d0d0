package division

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// Apply returns objs with spec.replicas of the divided workloads set to replicas (by
// render.Key), rehashed; the other objects are returned as they are, and objs is not modified.
func Apply(objs []*unstructured.Unstructured, replicas map[string]int64) ([]*unstructured.Unstructured, error) {
	if len(replicas) == 0 {
		return objs, nil
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		n, divided := replicas[render.Key(o)]
		if !divided {
			out[i] = o
			continue
		}
		c := o.DeepCopy()
		if err := unstructured.SetNestedField(c.Object, n, "spec", "replicas"); err != nil {
			return nil, fmt.Errorf("%s: set spec.replicas: %w", render.Key(o), err)
		}
		var err error
		if out[i], err = render.Rehash(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}
