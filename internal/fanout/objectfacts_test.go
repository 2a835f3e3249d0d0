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

	kinds, placed := facts.of(latest)
	if want := []string{"/v1/ConfigMap", "apps/v1/Deployment"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if got := placed.Pods().Value(); got != 4 {
		t.Fatalf("pods placed %d, want 4", got)
	}
	again, placedAgain := facts.of(latest[:])
	if &again[0] != &kinds[0] || placedAgain.Pods().Value() != 4 {
		t.Errorf("the same slice was not answered from what the pass computed")
	}
	if _, p := facts.of(divided); p.Pods().Value() != 1 {
		t.Errorf("another slice starting with the same object: pods placed %d, want 1", p.Pods().Value())
	}
	if _, p := facts.of(latest[:1]); p.Pods() != nil && p.Pods().Value() != 0 {
		t.Errorf("a shorter slice of the same array: pods placed %v, want none", p.Pods())
	}
	if k, _ := facts.of(nil); len(k) != 0 {
		t.Errorf("no objects: kinds %v", k)
	}
}
