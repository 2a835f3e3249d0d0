package deliver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// A delivery indexes its job's objects for the spoke watch from the keys it computed, and only
// while that job is the owner's current one: a job submitted meanwhile is indexed from its own
// objects when a spoke event first asks.
func TestDeliveryIndexesOnlyTheCurrentJob(t *testing.T) {
	cm := func(name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "team"}}}
		return o
	}
	owner := render.Owner{Kind: "Propagation.flotilla.dev", Namespace: "team", Name: "p"}
	old := Job{Owner: owner, Objects: []*unstructured.Unstructured{cm("a"), cm("b")}}
	w := &clusterWorker{jobs: map[pairKey]Job{owner: old}}

	w.indexDelivered(old, identify(old.Objects))
	if got := w.desiredLocked(owner, render.Key(old.Objects[1])); got != old.Objects[1] {
		t.Fatalf("the delivered job's object b is not indexed: %v", got)
	}

	// A new job arrives (Submit drops the index) while the old one is still being delivered.
	next := Job{Owner: owner, Objects: []*unstructured.Unstructured{cm("a"), cm("c")}}
	w.jobs[owner] = next
	delete(w.index, owner)
	w.indexDelivered(old, identify(old.Objects))
	if got := w.desiredLocked(owner, render.Key(old.Objects[1])); got != nil {
		t.Errorf("an object only the replaced job had is still desired: %v", got)
	}
	if got := w.desiredLocked(owner, render.Key(next.Objects[1])); got != next.Objects[1] {
		t.Errorf("the current job's object c is not desired: %v", got)
	}
}
