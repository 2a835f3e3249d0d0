package transparent

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
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
	got := aggregate([]spokeCopy{deploymentCopy("a", 1, 1, 2, "True"), deploymentCopy("b", 3, 3, 2, "True"), deploymentCopy("c", 1, 1, 2, "True")}, 7, nil, nil)
	if got["replicas"] != int64(6) || got["readyReplicas"] != int64(6) || got["observedGeneration"] != int64(7) {
		t.Fatalf("sums %v", got)
	}
	conds := got["conditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["status"] != "True" {
		t.Fatalf("conditions %v", conds)
	}

	lagging := aggregate([]spokeCopy{deploymentCopy("a", 2, 1, 1, "False"), deploymentCopy("b", 1, 1, 2, "True")}, 7, map[string]any{"observedGeneration": int64(6)}, nil)
	if lagging["observedGeneration"] != int64(6) || lagging["readyReplicas"] != int64(3) {
		t.Fatalf("lagging %v", lagging)
	}
	c := lagging["conditions"].([]any)[0].(map[string]any)
	if c["status"] != "False" || c["message"] != "a: m" {
		t.Fatalf("condition %v", c)
	}
}

func divided(cluster string, replicas, ready int64, annotations map[string]any) spokeCopy {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "generation": int64(1), "annotations": annotations},
		"spec":     map[string]any{"replicas": replicas},
		"status": map[string]any{"observedGeneration": int64(1), "replicas": replicas, "readyReplicas": ready,
			"availableReplicas": ready, "updatedReplicas": replicas},
	}}
	return spokeCopy{cluster: cluster, obj: u}
}

// TestAggregateNeverShowsMoreReadyThanTheDivisionWants: during a failover the failed-over
// cluster's copy still counts 4 ready in its last known status while the stand-ins run the
// whole 8. The hub must show 8 ready of 8, not 12, with the 4 beyond the division in the
// FleetSurplus condition; status.replicas stays what runs.
func TestAggregateNeverShowsMoreReadyThanTheDivisionWants(t *testing.T) {
	copies := []spokeCopy{divided("a", 4, 4, nil), divided("b", 4, 4, nil), divided("c", 4, 4, nil)}
	got := aggregate(copies, 1, nil, map[string]int64{"a": 4, "b": 4, "c": 0})
	for k, want := range map[string]int64{"readyReplicas": 8, "availableReplicas": 8, "updatedReplicas": 8, "replicas": 12} {
		if got[k] != want {
			t.Errorf("%s = %v, want %d", k, got[k], want)
		}
	}
	conds, _ := got["conditions"].([]any)
	if len(conds) != 1 {
		t.Fatalf("conditions %v, want FleetSurplus", conds)
	}
	c := conds[0].(map[string]any)
	if c["type"] != "FleetSurplus" || c["status"] != "True" || !strings.Contains(c["message"].(string), "4 ready replicas run beyond the division") ||
		!strings.Contains(c["message"].(string), "c 4 ready for a share of 0") {
		t.Errorf("condition %v", c)
	}

	// A move: a keeps 4 of its old share until b is Ready at its new share of 6.
	got = aggregate([]spokeCopy{divided("a", 4, 4, nil), divided("b", 6, 5, nil)}, 1, nil, map[string]int64{"a": 2, "b": 6})
	if got["readyReplicas"] != int64(7) {
		t.Errorf("readyReplicas during a move = %v, want 7 (2 of a's share, 5 of b's)", got["readyReplicas"])
	}

	// A copy a cluster's HPA scales counts what that HPA set, where the cluster has a share.
	scaled := map[string]any{"flotilla.dev/share": "4"}
	got = aggregate([]spokeCopy{divided("a", 6, 6, scaled), divided("b", 4, 4, scaled)}, 1, nil, map[string]int64{"a": 4, "b": 0})
	if got["readyReplicas"] != int64(6) {
		t.Errorf("readyReplicas with HPAs = %v, want 6", got["readyReplicas"])
	}

	// Once no copy runs beyond its share, the condition goes.
	got = aggregate([]spokeCopy{divided("a", 4, 4, nil), divided("b", 4, 4, nil)}, 1, nil, map[string]int64{"a": 4, "b": 4})
	if got["readyReplicas"] != int64(8) || got["conditions"] != nil {
		t.Errorf("steady: %v", got)
	}
	// A workload that is not divided is summed as before.
	if got := aggregate(copies, 1, nil, nil); got["readyReplicas"] != int64(12) {
		t.Errorf("not divided: readyReplicas = %v, want 12", got["readyReplicas"])
	}
}

// TestACopyARolloutHasNotReachedIsNotUpdated: while a rollout holds a cluster at an older
// revision, its pods are not the hub object's latest template: the fleet-wide status counts
// them in replicas but not in updatedReplicas, which is what `kubectl rollout status` on the
// hub waits for.
func TestACopyARolloutHasNotReachedIsNotUpdated(t *testing.T) {
	reached, held := deploymentCopy("a", 1, 1, 2, "True"), deploymentCopy("b", 1, 1, 2, "True")
	for _, c := range []spokeCopy{reached, held} {
		if err := unstructured.SetNestedField(c.obj.Object, int64(2), "status", "updatedReplicas"); err != nil {
			t.Fatal(err)
		}
	}
	held.behind = true
	got := aggregate([]spokeCopy{reached, held}, 1, nil, nil)
	if got["replicas"] != int64(4) || got["updatedReplicas"] != int64(2) || got["availableReplicas"] != int64(4) {
		t.Fatalf("replicas %v, updated %v, available %v: want 4, 2 (the held cluster's are not), 4", got["replicas"], got["updatedReplicas"], got["availableReplicas"])
	}
	held.behind = false
	if got := aggregate([]spokeCopy{reached, held}, 1, nil, nil); got["updatedReplicas"] != int64(4) {
		t.Fatalf("once reached, updated %v, want 4", got["updatedReplicas"])
	}
}

// TestPausedOnTheHubPausesTheFleetRollout: `kubectl rollout pause` of a Deployment whose
// Placement rolls revisions out pauses the fleet's rollout, makes no new revision and is not
// delivered (the clusters' own rollouts go on); without a rollout, spec.paused is delivered as
// it is.
func TestPausedOnTheHubPausesTheFleetRollout(t *testing.T) {
	r := &Reconciler{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment")}
	owner := render.Owner{Kind: r.OwnerKind(), Namespace: "shop", Name: "web"}
	deployment := func(paused bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop"}, "spec": map[string]any{"replicas": int64(2)}}}
		if paused {
			_ = unstructured.SetNestedField(u.Object, true, "spec", "paused")
		}
		return u
	}
	for _, tc := range []struct {
		name                      string
		rollout                   bool
		wantPaused, wantDelivered bool
		sameRevision              bool
	}{
		{"under a rollout", true, true, false, true},
		{"without a rollout", false, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			placement := &flotillav1.Placement{}
			if tc.rollout {
				placement.Spec.Rollout = &flotillav1.RolloutPolicy{}
			}
			running, _, err := r.render(deployment(false), owner, placement)
			if err != nil {
				t.Fatal(err)
			}
			rendered, paused, err := r.render(deployment(true), owner, placement)
			if err != nil {
				t.Fatal(err)
			}
			_, delivered, _ := unstructured.NestedBool(rendered.Object, "spec", "paused")
			same := render.Revision([]*unstructured.Unstructured{running}) == render.Revision([]*unstructured.Unstructured{rendered})
			if paused != tc.wantPaused || delivered != tc.wantDelivered || same != tc.sameRevision {
				t.Errorf("fleet paused %v, spec.paused delivered %v, same revision %v; want %v, %v, %v",
					paused, delivered, same, tc.wantPaused, tc.wantDelivered, tc.sameRevision)
			}
		})
	}
}
