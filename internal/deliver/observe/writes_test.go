package observe

import (
	"testing"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestWroteTellsOfAnotherOwnersRecentWrite(t *testing.T) {
	c := &Cluster{}
	alpha := render.Owner{Kind: "Propagation", Namespace: "team", Name: "alpha"}
	zeta := render.Owner{Kind: "Propagation", Namespace: "team", Name: "zeta"}
	if _, raced := c.Wrote("/ConfigMap/team/shared", "h-alpha", alpha); raced {
		t.Fatal("a first write reported a race")
	}
	if _, raced := c.Wrote("/ConfigMap/team/shared", "h-alpha2", alpha); raced {
		t.Error("an owner's second write reported a race with itself")
	}
	other, raced := c.Wrote("/ConfigMap/team/shared", "h-zeta", zeta)
	if !raced || other != alpha {
		t.Errorf("zeta's write after alpha's: other=%v raced=%v, want alpha, true", other, raced)
	}
	if !c.CacheBehind("/ConfigMap/team/shared", "h-alpha") || !c.CacheBehind("/ConfigMap/team/shared", "") {
		t.Error("a cache showing alpha's version, or nothing, is not behind zeta's write")
	}
	if c.CacheBehind("/ConfigMap/team/shared", "h-zeta") {
		t.Error("a cache showing the last write is behind")
	}
}
