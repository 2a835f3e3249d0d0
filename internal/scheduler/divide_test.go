package scheduler

import (
	"fmt"
	"testing"
)

func TestDivide(t *testing.T) {
	cases := []struct {
		name     string
		total    int64
		clusters []string
		current  map[string]int64
		check    func(t *testing.T, got map[string]int64)
	}{
		{"even", 6, []string{"a", "b", "c"}, nil, func(t *testing.T, got map[string]int64) {
			if got["a"] != 2 || got["b"] != 2 || got["c"] != 2 {
				t.Errorf("got %v", got)
			}
		}},
		{"no clusters", 3, nil, nil, func(t *testing.T, got map[string]int64) {
			if len(got) != 0 {
				t.Errorf("got %v", got)
			}
		}},
		{"zero replicas", 0, []string{"a", "b"}, nil, func(t *testing.T, got map[string]int64) {
			if got["a"] != 0 || got["b"] != 0 {
				t.Errorf("got %v", got)
			}
		}},
		{"the remainder stays where it runs", 5, []string{"a", "b", "c"}, map[string]int64{"a": 1, "b": 2, "c": 2},
			func(t *testing.T, got map[string]int64) {
				if got["a"] != 1 || got["b"] != 2 || got["c"] != 2 {
					t.Errorf("got %v, want the extra replicas kept on b and c", got)
				}
			}},
		{"a cluster joining does not move the remainder off a cluster that has it", 4, []string{"a", "b", "c"}, map[string]int64{"b": 2, "c": 2},
			func(t *testing.T, got map[string]int64) {
				if got["a"] != 1 || got["b"]+got["c"] != 3 {
					t.Errorf("got %v", got)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, Divide(c.total, c.clusters, c.current, "shop/web")) })
	}
}

// Remainders of many workloads spread over the clusters instead of piling on the first name.
func TestDivideHasNoNameBias(t *testing.T) {
	clusters := []string{"a", "b", "c", "d"}
	extra := map[string]int{}
	for i := range 400 {
		for c, n := range Divide(5, clusters, nil, fmt.Sprintf("shop/web-%d", i)) {
			if n == 2 {
				extra[c]++
			}
		}
	}
	for _, c := range clusters {
		if extra[c] < 60 || extra[c] > 140 {
			t.Errorf("cluster %s got the extra replica of %d of 400 workloads, want about 100: %v", c, extra[c], extra)
		}
	}
}

func FuzzDivide(f *testing.F) {
	f.Add(int64(7), uint8(3), int64(2), "shop/web")
	f.Add(int64(0), uint8(1), int64(0), "x")
	f.Add(int64(1000), uint8(17), int64(90), "a/b")
	f.Fuzz(func(t *testing.T, total int64, n uint8, held int64, seed string) {
		if total < 0 || total > 1<<40 {
			return
		}
		clusters := make([]string, n)
		current := map[string]int64{}
		for i := range clusters {
			clusters[i] = fmt.Sprintf("c%d", i)
			if i%2 == 0 {
				current[clusters[i]] = held
			}
		}
		got := Divide(total, clusters, current, seed)
		if len(got) != len(clusters) {
			t.Fatalf("%d shares for %d clusters", len(got), len(clusters))
		}
		var sum, lo, hi int64 = 0, 1 << 62, -1
		for _, v := range got {
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		if n > 0 && sum != total {
			t.Fatalf("shares sum to %d, want %d: %v", sum, total, got)
		}
		if n > 0 && hi-lo > 1 {
			t.Fatalf("shares differ by more than one: %v", got)
		}
		again := Divide(total, clusters, current, seed)
		for c := range got {
			if got[c] != again[c] {
				t.Fatalf("not deterministic: %v then %v", got, again)
			}
		}
	})
}
