package ownerpass

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TestAnOwnerPausesItsOwnRolloutOnly: an owner that pauses its rollout (a Deployment paused on
// the hub) pauses it for itself; the Placement, which other owners share, is left as it is.
func TestAnOwnerPausesItsOwnRolloutOnly(t *testing.T) {
	shared := &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "canary"}}}
	p := Pass{Placement: &flotillav1.Placement{Spec: flotillav1.PlacementSpec{Rollout: shared}}}
	if got := policyOf(p); got != shared {
		t.Errorf("not paused: policy %+v, want the Placement's", got)
	}
	p.Paused = true
	if got := policyOf(p); !got.Paused || len(got.Stages) != 1 || shared.Paused {
		t.Errorf("paused: policy %+v, Placement's paused %v; want a paused copy, the Placement's untouched", got, shared.Paused)
	}
	p.Placement.Spec.Rollout = nil
	if got := policyOf(p); got != nil {
		t.Errorf("no rollout: policy %+v, want none", got)
	}
}
