package observe

import (
	"slices"
	"testing"
)

// An object is unchanged only as confirmed, untouched since, and under the same rules.
func TestUnchanged(t *testing.T) {
	c := NewConfirmed()
	c.Hashes["cm"] = "h1"
	c.Under = "strategy-a"
	cases := []struct {
		name        string
		c           *Confirmed
		hash, under string
		want        bool
	}{
		{"as confirmed", c, "h1", "strategy-a", true},
		{"another hash", c, "h2", "strategy-a", false},
		{"under another strategy", c, "h1", "strategy-b", false},
		{"nothing confirmed", nil, "h1", "strategy-a", false},
		{"touched since", &Confirmed{Hashes: c.Hashes, Under: c.Under, Stale: map[string]bool{"cm": true}}, "h1", "strategy-a", false},
	}
	for _, tc := range cases {
		if got := tc.c.Unchanged("cm", tc.hash, tc.under); got != tc.want {
			t.Errorf("%s: Unchanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// wantOf wants the keys given.
func wantOf(keys ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(keys, k) }
}

func TestStillOwnedAndOwns(t *testing.T) {
	var none *Confirmed
	if none.Owns("a") || none.StillOwned(wantOf()) != nil {
		t.Error("nothing confirmed, yet something owned")
	}
	// A delivery confirmed a and b; the next, held, wants only a: b stays the owner's.
	first := NewConfirmed()
	first.Hashes["a"], first.Hashes["b"] = "h", "h"
	held := NewConfirmed()
	held.Hashes["a"] = "h"
	held.Left = first.StillOwned(wantOf("a"))
	if !held.Owns("a") || !held.Owns("b") || held.Owns("c") {
		t.Errorf("after a held prune: owns a %v, b %v, c %v; want true, true, false", held.Owns("a"), held.Owns("b"), held.Owns("c"))
	}
	// Held again, wanting b back and c new: nothing is left over any more.
	if left := held.StillOwned(wantOf("a", "b", "c")); left != nil {
		t.Errorf("StillOwned = %v, want nothing", left)
	}
}
