package observe

import "testing"

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
