package transparent

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/deliver"
)

// TestPulledCopyCountsOnlyWhatTheAgentReportsReady: a pull cluster's copy counts its desired
// replicas once its agent reports the copy delivered at the wanted revision and Ready, and
// nothing (holding the fleet's observedGeneration back) before.
func TestPulledCopyCountsOnlyWhatTheAgentReportsReady(t *testing.T) {
	hub := deploymentCopy("", 4, 4, 0, "True").obj
	hub.SetNamespace("shop")
	want := hub.DeepCopy()
	delete(want.Object, "status")
	if err := unstructured.SetNestedField(want.Object, int64(2), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	objects := []*unstructured.Unstructured{want}
	ready := deliver.Result{Revision: "r2", Complete: true, Applied: 1, Ready: 1}

	cp := pulledCopy(hub, objects, "r2", ready, true)
	push := deploymentCopy("push", 3, 3, 2, "True")
	got := aggregate([]spokeCopy{push, {cluster: "pull", obj: cp}}, 4, nil, nil)
	if got["readyReplicas"] != int64(4) || got["availableReplicas"] != int64(4) || got["observedGeneration"] != int64(4) {
		t.Fatalf("with the pull copy reported ready: %v", got)
	}
	for name, res := range map[string]deliver.Result{
		"an older revision": {Revision: "r1", Complete: true, Applied: 1, Ready: 1},
		"not ready":         {Revision: "r2", Complete: true, Applied: 1, Ready: 0},
		"not complete":      {Revision: "r2", Applied: 1, Ready: 1},
	} {
		got := aggregate([]spokeCopy{push, {cluster: "pull", obj: pulledCopy(hub, objects, "r2", res, true)}}, 4, map[string]any{"observedGeneration": int64(3)}, nil)
		if got["readyReplicas"] != int64(2) || got["observedGeneration"] != int64(3) {
			t.Errorf("%s: %v", name, got)
		}
	}
	if cp := pulledCopy(hub, objects, "r2", deliver.Result{}, false); cp == nil || cp.Object["status"].(map[string]any)["readyReplicas"] != nil {
		t.Errorf("no report: %v", cp)
	}
	if pulledCopy(hub, nil, "r2", ready, true) != nil {
		t.Error("a copy made for a cluster that gets none")
	}
}
