package deliver

import (
	"testing"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestRememberAppliedTellsOfAnotherOwnersRecentWrite(t *testing.T) {
	w := &clusterWorker{}
	alpha := render.Owner{Kind: "Propagation", Namespace: "team", Name: "alpha"}
	zeta := render.Owner{Kind: "Propagation", Namespace: "team", Name: "zeta"}
	if _, raced := w.rememberApplied("/ConfigMap/team/shared", "h-alpha", alpha); raced {
		t.Fatal("a first write reported a race")
	}
	if _, raced := w.rememberApplied("/ConfigMap/team/shared", "h-alpha2", alpha); raced {
		t.Error("an owner's second write reported a race with itself")
	}
	other, raced := w.rememberApplied("/ConfigMap/team/shared", "h-zeta", zeta)
	if !raced || other != alpha {
		t.Errorf("zeta's write after alpha's: other=%v raced=%v, want alpha, true", other, raced)
	}
	if !w.cacheBehind("/ConfigMap/team/shared", "h-alpha") || !w.cacheBehind("/ConfigMap/team/shared", "") {
		t.Error("a cache showing alpha's version, or nothing, is not behind zeta's write")
	}
	if w.cacheBehind("/ConfigMap/team/shared", "h-zeta") {
		t.Error("a cache showing the last write is behind")
	}
}
