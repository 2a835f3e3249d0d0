package deliver

import (
	"context"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// An owner refused because another holds the object is delivered afresh when the holder lets
// go of that object, and only then.
func TestReleasedWakesTheOwnersWaitingForTheObject(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	w := d.worker("a")
	waiting := render.Owner{Kind: "Propagation", Namespace: "team", Name: "alpha"}
	confirmed := func() bool {
		return w.seen.Take(waiting) != nil
	}
	w.seen.Confirm(waiting, observe.NewConfirmed())
	w.waitFor("v1/ConfigMap/team/shared", waiting)

	w.released("v1/ConfigMap/team/other")
	if !confirmed() {
		t.Fatal("a release of another object reset the waiting owner")
	}
	w.released("v1/ConfigMap/team/shared")
	if confirmed() {
		t.Error("the waiting owner keeps its confirmed objects: its next delivery would skip the released object")
	}
	w.mu.Lock()
	left := len(w.claims)
	w.mu.Unlock()
	if left != 0 {
		t.Errorf("%d claims left after the release", left)
	}
}
