package ownerpass

import (
	"context"
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
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

// TestARollbackHoldsWhileTheOwnerReadLags: onFailure: Rollback sets flotilla.dev/undo on the
// owner; a pass that reads the owner before the hub cache shows it must not roll the bad
// revision out again. Once the owner shows it, it is the annotation's: taken away, the
// revision rolls out again. An undo of a revision that is no longer the latest undoes nothing.
func TestARollbackHoldsWhileTheOwnerReadLags(t *testing.T) {
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "settings"}
	r := &Runner{}
	p := Pass{Placement: &flotillav1.Placement{Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{
		OnFailure: flotillav1.RolloutRollback, Stages: []flotillav1.RolloutStage{{Name: "canary", ClusterNames: []string{"a"}}}}}}}
	in := percluster.Input{Owner: owner, Placement: p.Placement, Chosen: []string{"a", "b"}, LatestName: "v2",
		Latest: percluster.Revision{Name: "v2"}, Facts: map[string]override.Cluster{"a": {Name: "a"}, "b": {Name: "b"}}}
	pass := func(running map[string]fanout.Running) (Result, []flotillav1.RevisionPin) {
		var res Result
		pins := r.gate(context.Background(), p, in, running, &res)
		return res, pins
	}
	heldAt := func(pins []flotillav1.RevisionPin, rev string) bool {
		return flotillav1.PinOf(pins, "a") == rev && flotillav1.PinOf(pins, "b") == rev
	}
	res, pins := pass(map[string]fanout.Running{"a": {Revision: "v2", Failed: "denied"}, "b": {Revision: "v1", Ready: true}})
	if res.Rollout == nil || res.Rollout.Phase != flotillav1.RolloutRolledBack || !heldAt(pins, "v1") {
		t.Fatalf("canary failed: rollout %+v, pins %v; want rolled back, every cluster at v1", res.Rollout, pins)
	}
	back := map[string]fanout.Running{"a": {Revision: "v1", Ready: true}, "b": {Revision: "v1", Ready: true}}
	res, pins = pass(back) // the owner as read does not show the undo yet
	if res.Rollout.Phase != flotillav1.RolloutRolledBack || !heldAt(pins, "v1") {
		t.Fatalf("a lagging read: rollout %+v, pins %v; want still rolled back", res.Rollout, pins)
	}
	p.Undo = "v1@v2"
	if res, _ = pass(back); res.Rollout.Phase != flotillav1.RolloutRolledBack {
		t.Fatalf("the owner shows the undo: rollout %+v", res.Rollout)
	}
	p.Undo = "" // a person took it away: v2 rolls out again
	if res, pins = pass(back); res.Rollout.Phase != flotillav1.RolloutProgressing || flotillav1.PinOf(pins, "a") != "" {
		t.Fatalf("undo taken away: rollout %+v, pins %v; want the canary let through again", res.Rollout, pins)
	}
	p.Undo = "v0@v1" // of an earlier latest: spent
	if res, _ = pass(back); res.Rollout.Phase == flotillav1.RolloutRolledBack {
		t.Fatalf("a spent undo rolled back: %+v", res.Rollout)
	}
}

// TestGateAlone: the gate over what an owner kind's own step read (fleet APIs): a person's
// pin first, the rollout's holds after; a latest revision that is not kept halts the rollout,
// holding every cluster at what it runs.
func TestGateAlone(t *testing.T) {
	owner := render.Owner{Kind: "ResourceGraphDefinition.kro.run", Name: "webapp"}
	r := &Runner{}
	p := Pass{Placement: &flotillav1.Placement{Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{
		Stages: []flotillav1.RolloutStage{{Name: "canary", ClusterNames: []string{"a"}}}}}},
		Pins: []flotillav1.RevisionPin{{Cluster: "c", Revision: "v0"}}}
	in := percluster.Input{Owner: owner, Placement: p.Placement, Chosen: []string{"a", "b", "c"}, LatestName: "v2", Pins: p.Pins,
		Latest: percluster.Revision{Name: "v2"}, Facts: map[string]override.Cluster{"a": {Name: "a"}, "b": {Name: "b"}, "c": {Name: "c"}}}
	running := map[string]fanout.Running{"a": {Revision: "v1", Ready: true}, "b": {Revision: "v1", Ready: true}, "c": {Revision: "v0", Ready: true}}
	gate := func(notKept string) ([]flotillav1.RevisionPin, Result) {
		res := Result{LatestName: in.LatestName, Kept: in.Latest.Name, NoHistory: notKept}
		return r.gate(context.Background(), p, in, running, &res), res
	}
	pins, res := gate("")
	if len(pins) == 0 || pins[0] != p.Pins[0] || flotillav1.PinOf(pins, "a") != "" || flotillav1.PinOf(pins, "b") != "v1" {
		t.Fatalf("pins %v; want c's pin first, the canary let through, b held at v1", pins)
	}
	if res.Rollout == nil || res.Rollout.Revision != "v2" || !res.RolloutChanged || res.Kept != "v2" {
		t.Fatalf("result %+v; want the rollout of v2 reported", res)
	}
	in.Latest.Name = ""
	pins, res = gate("too large to keep")
	if res.Rollout == nil || res.Rollout.Phase != flotillav1.RolloutHalted || flotillav1.PinOf(pins, "a") != "v1" || flotillav1.PinOf(pins, "b") != "v1" {
		t.Fatalf("an unkept latest: rollout %+v, pins %v; want halted, every cluster at v1", res.Rollout, pins)
	}
	r.Forget(owner)
	if _, ok := r.rollouts[owner]; ok {
		t.Error("the owner is still remembered after Forget")
	}
}
