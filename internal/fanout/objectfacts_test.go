package fanout

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The kinds and usage a pass records are computed once per slice of objects, and a slice
// holding other objects (a cluster's division or overrides) gets its own, even where it starts
// with the same object and has as many.
func TestObjectFactsAreOfTheSliceTheyWereComputedFor(t *testing.T) {
	obj := func(kind string, replicas int64) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
			"metadata": map[string]any{"name": "web", "namespace": "team"}}}
		if replicas > 0 {
			o.Object["spec"] = map[string]any{"replicas": replicas}
		}
		return o
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "team"}}}
	latest := []*unstructured.Unstructured{cm, obj("Deployment", 4)}
	divided := []*unstructured.Unstructured{cm, obj("Deployment", 1)} // same first object, same length
	facts := objectFacts{}

	first := facts.of(latest)
	kinds, placed := first.kinds, first.placed
	if want := []string{"/v1/ConfigMap", "apps/v1/Deployment"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if got := placed.Pods().Value(); got != 4 {
		t.Fatalf("pods placed %d, want 4", got)
	}
	again := facts.of(latest[:])
	if &again.kinds[0] != &kinds[0] || again.placed.Pods().Value() != 4 || again.identities != first.identities {
		t.Errorf("the same slice was not answered from what the pass computed")
	}
	if other := facts.of(divided); other.placed.Pods().Value() != 1 || other.identities == first.identities {
		t.Errorf("another slice starting with the same object: pods placed %d, want 1", other.placed.Pods().Value())
	}
	if shorter := facts.of(latest[:1]); shorter.placed.Pods() != nil && shorter.placed.Pods().Value() != 0 {
		t.Errorf("a shorter slice of the same array: pods placed %v, want none", shorter.placed.Pods())
	}
	if none := facts.of(nil); len(none.kinds) != 0 {
		t.Errorf("no objects: kinds %v", none.kinds)
	}
}
