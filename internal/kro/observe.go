package kro

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Query asks what exists on the instance's cluster: either one object by name, or a list by
// label selector.
type Query struct {
	Kind     schema.GroupVersionKind
	Resource schema.GroupVersionResource
	// Namespace is empty for a cluster-scoped kind, and for a list across all namespaces.
	Namespace string
	// Name asks for one object; it is empty for a list.
	Name string
	// Selector selects a list; it is nil when Name is set.
	Selector labels.Selector
}

// Observer answers queries from what the caller knows of the cluster (in Flotilla, the spoke
// caches). An absent object is an empty answer, not an error; an error means the cluster's
// state is unknown, and Evaluate then stops, as kro stops when a read fails.
type Observer interface {
	Observe(Query) ([]*unstructured.Unstructured, error)
}

// Objects is an Observer over a fixed set of objects: a test's, or a snapshot of a cache.
type Objects []*unstructured.Unstructured

// Observe returns the objects of the query's kind that match its namespace, name or selector.
func (o Objects) Observe(q Query) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, obj := range o {
		if obj.GroupVersionKind() != q.Kind {
			continue
		}
		if q.Namespace != "" && obj.GetNamespace() != q.Namespace {
			continue
		}
		if q.Name != "" && obj.GetName() != q.Name {
			continue
		}
		if q.Selector != nil && !q.Selector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		out = append(out, obj.DeepCopy())
	}
	return out, nil
}
