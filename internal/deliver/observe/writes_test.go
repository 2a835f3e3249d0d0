package observe

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestWroteTellsOfAnotherOwnersRecentWrite(t *testing.T) {
	c := &Cluster{}
	alpha := render.Owner{Kind: "Propagation", Namespace: "team", Name: "alpha"}
	zeta := render.Owner{Kind: "Propagation", Namespace: "team", Name: "zeta"}
	if _, raced := c.Wrote("/ConfigMap/team/shared", "h-alpha", alpha, ""); raced {
		t.Fatal("a first write reported a race")
	}
	if _, raced := c.Wrote("/ConfigMap/team/shared", "h-alpha2", alpha, ""); raced {
		t.Error("an owner's second write reported a race with itself")
	}
	other, raced := c.Wrote("/ConfigMap/team/shared", "h-zeta", zeta, "")
	if !raced || other != alpha {
		t.Errorf("zeta's write after alpha's: other=%v raced=%v, want alpha, true", other, raced)
	}
	if !c.CacheBehind("/ConfigMap/team/shared", configMap("h-alpha", nil)) || !c.CacheBehind("/ConfigMap/team/shared", nil) {
		t.Error("a cache showing alpha's version, or nothing, is not behind zeta's write")
	}
	if c.CacheBehind("/ConfigMap/team/shared", configMap("h-zeta", nil)) {
		t.Error("a cache showing the last write is behind")
	}
}

// A write someone changes right after (a spoke controller that undoes every correction): the
// event of their change may reach the cluster's watch before the deliverer records its write.
// The write must not then be trusted over the cache, or the next delivery would skip the
// object and the change would stand until the next periodic verification.
func TestAWriteTheClusterMovedPastIsNotTrusted(t *testing.T) {
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "fought"}
	key := "/ConfigMap/team/fought"
	event := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("team")
		u.SetName("fought")
		u.SetResourceVersion(rv)
		return u
	}
	for _, tc := range []struct {
		name    string
		seen    string // the resourceVersion a spoke event showed while the write was under way
		trusted bool
	}{
		{"no event meanwhile", "", true},
		{"the event of this very write", "10", true},
		{"the event of an older write", "9", true},
		{"the event of a later change", "11", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{}
			c.Writing(key)
			if tc.seen != "" {
				c.Changed(owner, key, event("1"), event(tc.seen), false, nil)
			}
			c.Wrote(key, "h1", owner, "10")
			if got := c.WroteRecently(key, "h1"); got != tc.trusted {
				t.Errorf("write trusted over the cache: %v, want %v", got, tc.trusted)
			}
			if len(c.writing) != 0 {
				t.Errorf("writes under way left behind: %v", c.writing)
			}
		})
	}
	// Another owner's prune deleting the object meanwhile leaves the write's mark alone.
	c := &Cluster{}
	c.Writing(key)
	c.Deleted(key)
	c.Changed(owner, key, event("1"), event("11"), false, nil)
	c.Wrote(key, "h1", owner, "10")
	if c.WroteRecently(key, "h1") {
		t.Error("a deletion took a write's mark: the write is trusted though the cluster moved past it")
	}
	c = &Cluster{}
	c.Writing(key)
	c.WriteFailed(key)
	c.Changed(owner, key, event("1"), event("11"), false, nil)
	c.Wrote(key, "h1", owner, "10") // not marked: nothing seen is remembered for it
	if !c.WroteRecently(key, "h1") || len(c.writing) != 0 {
		t.Errorf("a failed write left its mark: writing %v", c.writing)
	}
}

// A sweep that forgets every write lets the map go, so the room a bulk delivery's writes took
// is given back; one that keeps some keeps the map.
func TestSweptWritesGiveTheirRoomBack(t *testing.T) {
	c := &Cluster{}
	old := time.Now().Add(-CacheLag)
	c.mu.Lock()
	for i := range 1000 {
		c.recordLocked(fmt.Sprintf("/ConfigMap/team/cm-%d", i), write{hash: "h", at: old})
	}
	c.recordLocked("/ConfigMap/team/recent", write{hash: "h", at: time.Now()})
	c.mu.Unlock()
	c.sweepWrites()
	if c.writes == nil || len(c.writes) != 1 || !c.WroteRecently("/ConfigMap/team/recent", "h") {
		t.Fatalf("the recent write was not kept: %v", c.writes)
	}
	c.mu.Lock()
	c.writes["/ConfigMap/team/recent"] = write{hash: "h", at: old}
	c.mu.Unlock()
	c.sweepWrites()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes != nil || c.sweeping {
		t.Errorf("an emptied map of writes is kept (%d entries), sweeping %v", len(c.writes), c.sweeping)
	}
}

// The cache is behind a recent write while it shows another hash, or a copy older than the
// write (one with the same hash from before a change in between); a resourceVersion that is
// unknown or not a number leaves the hash to decide.
func TestCacheBehindAWriteByHashAndVersion(t *testing.T) {
	key := "/ConfigMap/team/settings"
	cached := func(hash, rv string) *unstructured.Unstructured {
		u := configMap(hash, nil)
		u.SetResourceVersion(rv)
		return u
	}
	for _, tc := range []struct {
		name    string
		wroteRV string
		cached  *unstructured.Unstructured
		behind  bool
	}{
		{"the write itself", "9", cached("h1", "9"), false},
		{"a later version", "9", cached("h1", "12"), false},
		{"another hash", "9", cached("h0", "12"), true},
		{"an older copy with the written hash", "9", cached("h1", "5"), true},
		{"nothing cached", "9", nil, true},
		{"the write's version unknown", "", cached("h1", "5"), false},
		{"a version that is no number", "9", cached("h1", "x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{}
			c.Wrote(key, "h1", render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, tc.wroteRV)
			if got := c.CacheBehind(key, tc.cached); got != tc.behind {
				t.Errorf("CacheBehind = %v, want %v", got, tc.behind)
			}
		})
	}
}
