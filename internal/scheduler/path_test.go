package scheduler

import (
	"maps"
	"testing"
)

func TestChoosePath(t *testing.T) {
	cs := []Candidate{cand("a", 1), cand("b", 1)}
	in := DivideInput{Total: 4, Clusters: cs}
	key := divisionKey(in)
	prev := func(k string, r map[string]int32, unplaced int32) *Division {
		return &Division{Key: k, Replicas: r, Unplaced: unplaced}
	}
	unschedulable := []Candidate{with(cand("a", 1), func(c *Candidate) { c.Unschedulable = 1 }), cand("b", 1)}
	cases := []struct {
		name string
		in   DivideInput
		want path
	}{
		{"nothing known", in, pathFresh},
		{"rebalance", DivideInput{Total: 4, Clusters: cs, Rebalance: true, Previous: prev(key, shares("a", 2, "b", 2), 0)}, pathFresh},
		{"keyless previous", DivideInput{Total: 4, Clusters: cs, Previous: prev("", shares("a", 2, "b", 2), 0)}, pathAdopt},
		{"key changed", DivideInput{Total: 4, Clusters: cs, Previous: prev("other", shares("a", 2, "b", 2), 0)}, pathFresh},
		{"total changed", DivideInput{Total: 6, Clusters: cs, Previous: prev(key, shares("a", 2, "b", 2), 0)}, pathIncremental},
		{"unplaced counts toward the previous total", DivideInput{Total: 4, Clusters: cs, Previous: prev(key, shares("a", 1, "b", 1), 2)}, pathUnchanged},
		{"unschedulable replicas", DivideInput{Total: 4, Clusters: unschedulable, Previous: prev(key, shares("a", 2, "b", 2), 0)}, pathShift},
		{"same inputs", DivideInput{Total: 4, Clusters: cs, Previous: prev(key, shares("a", 3, "b", 1), 0)}, pathUnchanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := choosePath(c.in, divisionKey(c.in)); got != c.want {
				t.Errorf("path %d, want %d", got, c.want)
			}
		})
	}
}

// The key changes with every decisive input and with nothing else.
func TestDivisionKey(t *testing.T) {
	base := DivideInput{Total: 4, Seed: "s", Clusters: []Candidate{cand("a", 1), cand("b", 2)}}
	key := divisionKey(base)
	same := map[string]func(*DivideInput){
		"total":         func(in *DivideInput) { in.Total = 9 },
		"seed":          func(in *DivideInput) { in.Seed = "t" },
		"estimate":      func(in *DivideInput) { in.Clusters[0].Estimate = 3 },
		"unschedulable": func(in *DivideInput) { in.Clusters[0].Unschedulable = 3 },
		"order":         func(in *DivideInput) { in.Clusters[0], in.Clusters[1] = in.Clusters[1], in.Clusters[0] },
		"previous":      func(in *DivideInput) { in.Previous = &Division{Key: "x"} },
		"default mode":  func(in *DivideInput) { in.Mode = ModeWeighted },
		"default state": func(in *DivideInput) { in.Clusters[0].State = StateActive },
	}
	differs := map[string]func(*DivideInput){
		"mode":      func(in *DivideInput) { in.Mode = ModePacked },
		"name":      func(in *DivideInput) { in.Clusters[0].Name = "c" },
		"candidate": func(in *DivideInput) { in.Clusters = append(in.Clusters, cand("c", 1)) },
		"tier":      func(in *DivideInput) { in.Clusters[0].Tier = 1 },
		"state":     func(in *DivideInput) { in.Clusters[0].State = StateCordoned },
		"weight":    func(in *DivideInput) { in.Clusters[0].Weight = 5 },
		"min":       func(in *DivideInput) { in.Clusters[0].Min = 1 },
		"max":       func(in *DivideInput) { in.Clusters[0].Max = 1 },
		"limit":     func(in *DivideInput) { in.Clusters[0].LimitFit = 1 },
	}
	for name, change := range same {
		in := base
		in.Clusters = append([]Candidate(nil), base.Clusters...)
		change(&in)
		if divisionKey(in) != key {
			t.Errorf("changing the %s changed the key", name)
		}
	}
	for name, change := range differs {
		in := base
		in.Clusters = append([]Candidate(nil), base.Clusters...)
		change(&in)
		if divisionKey(in) == key {
			t.Errorf("changing the %s did not change the key", name)
		}
	}
}

func TestDividePaths(t *testing.T) {
	onPremThenCloud := func(total int32, previous *Division) DivideInput {
		return DivideInput{Total: total, Seed: "shop/web", Previous: previous, Clusters: []Candidate{
			with(cand("dc-1", 1), func(c *Candidate) { c.LimitFit = 4 }), with(cand("dc-2", 1), func(c *Candidate) { c.LimitFit = 4 }),
			with(cand("aws-1", 1), func(c *Candidate) { c.Tier = 1 }), with(cand("gcp-1", 1), func(c *Candidate) { c.Tier = 1 })}}
	}
	at10 := Divide(onPremThenCloud(10, nil))
	three := []Candidate{cand("a", 1), cand("b", 1), cand("c", 1)}
	keyOfThree := divisionKey(DivideInput{Clusters: three})
	cases := []struct {
		name  string
		in    DivideInput
		check func(t *testing.T, got map[string]int32)
	}{
		{"incremental scale-up adds only the difference", onPremThenCloud(12, &at10), func(t *testing.T, got map[string]int32) {
			expect(t, got, shares("dc-1", 4, "dc-2", 4, "aws-1", 2, "gcp-1", 2))
		}},
		{"incremental scale-down empties later tiers first", onPremThenCloud(7, &at10), func(t *testing.T, got map[string]int32) {
			if got["aws-1"] != 0 || got["gcp-1"] != 0 || got["dc-1"]+got["dc-2"] != 7 || min(got["dc-1"], got["dc-2"]) != 3 {
				t.Errorf("got %v", got)
			}
		}},
		{"unchanged: estimates alone move nothing", DivideInput{Total: 6, Seed: "s",
			Clusters: []Candidate{with(cand("a", 1), func(c *Candidate) { c.Estimate = 1 }), cand("b", 1), cand("c", 1)},
			Previous: &Division{Key: keyOfThree, Replicas: shares("a", 2, "b", 2, "c", 2)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 2, "b", 2, "c", 2)) }},
		{"a previous that no longer sums to its total is repaired", DivideInput{Total: 6, Seed: "s", Clusters: three,
			Previous: &Division{Key: keyOfThree, Replicas: shares("a", 2, "b", 1, "c", 2), Unplaced: 1}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 2, "b", 2, "c", 2)) }},
		{"fresh on a new weight, ties to the seats held", DivideInput{Total: 5, Seed: "s",
			Clusters: []Candidate{cand("a", 1), cand("b", 1), cand("c", 3)},
			Previous: &Division{Key: keyOfThree, Replicas: shares("a", 1, "b", 2, "c", 2)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 1, "b", 1, "c", 3)) }},
		{"adopt: a keyless valid division stays as it is", DivideInput{Total: 5, Seed: "s", Clusters: three,
			Previous: &Division{Replicas: shares("a", 1, "b", 2, "c", 2)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 1, "b", 2, "c", 2)) }},
		{"adopt: a keyless invalid division is divided again, sticky to holders", DivideInput{Total: 5, Seed: "s", Clusters: three,
			Previous: &Division{Replicas: shares("a", 4, "b", 1, "c", 0)}},
			func(t *testing.T, got map[string]int32) {
				if got["a"] != 2 || got["b"]+got["c"] != 3 || min(got["b"], got["c"]) != 1 {
					t.Errorf("got %v, want a=2 (it held the most) and 2/1 between b and c", got)
				}
			}},
		{"adopt: a joining cluster gets its share", DivideInput{Total: 6, Seed: "s", Clusters: three,
			Previous: &Division{Replicas: shares("a", 3, "b", 3)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 2, "b", 2, "c", 2)) }},
		{"shift: unschedulable replicas move, nothing else", DivideInput{Total: 9, Seed: "s",
			Clusters: []Candidate{with(cand("a", 1), func(c *Candidate) { c.Unschedulable = 2 }), cand("b", 1), cand("c", 1)},
			Previous: &Division{Key: keyOfThree, Replicas: shares("a", 3, "b", 3, "c", 3)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 1, "b", 4, "c", 4)) }},
		{"shift: nowhere else to go, they stay", DivideInput{Total: 4, Seed: "s",
			Clusters: []Candidate{with(cand("a", 1), func(c *Candidate) { c.Unschedulable = 2 }),
				with(cand("b", 1), func(c *Candidate) { c.LimitFit = 2 })},
			Previous: &Division{Key: divisionKey(DivideInput{Clusters: []Candidate{cand("a", 1), with(cand("b", 1), func(c *Candidate) { c.LimitFit = 2 })}}),
				Replicas: shares("a", 2, "b", 2)}},
			func(t *testing.T, got map[string]int32) { expect(t, got, shares("a", 2, "b", 2)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Divide(c.in)
			c.check(t, got.Replicas)
			if why := checkInvariants(c.in, got); why != "" {
				t.Error(why)
			}
		})
	}
}

// Packed, scaled back down: the last cluster in its order is emptied first.
func TestDividePackedScaleDown(t *testing.T) {
	in := DivideInput{Total: 10, Mode: ModePacked, Seed: "s", Clusters: []Candidate{
		with(cand("gpu-a", 1), func(c *Candidate) { c.Estimate = 3 }), with(cand("gpu-b", 1), func(c *Candidate) { c.Estimate = 8 })}}
	at10 := Divide(in)
	in.Total, in.Previous = 6, &at10
	expect(t, Divide(in).Replicas, shares("gpu-a", 0, "gpu-b", 6))
}

func expect(t *testing.T, got, want map[string]int32) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// Transparent mode's even division: equal weights, what runs now as a keyless previous.
func TestEvenDivisionFromWhatRuns(t *testing.T) {
	even := func(total int32, clusters []string, have map[string]int32) map[string]int32 {
		in := DivideInput{Total: total, Seed: "shop/web", Previous: &Division{Replicas: have}}
		for _, c := range clusters {
			in.Clusters = append(in.Clusters, cand(c, 1))
		}
		return Divide(in).Replicas
	}
	abc := []string{"a", "b", "c"}
	expect(t, even(6, abc, nil), shares("a", 2, "b", 2, "c", 2))
	// Every even division of 5 over 3 is kept as it runs.
	for _, have := range []map[string]int32{shares("a", 2, "b", 2, "c", 1), shares("a", 2, "b", 1, "c", 2), shares("a", 1, "b", 2, "c", 2)} {
		expect(t, even(5, abc, have), have)
	}
	// A cluster joining takes replicas from the ones holding the remainder last.
	if got := even(4, abc, shares("b", 2, "c", 2)); got["a"] != 1 || got["b"]+got["c"] != 3 {
		t.Errorf("got %v", got)
	}
	// Scaling up keeps the remainder where it runs.
	expect(t, even(8, abc, shares("a", 2, "b", 3, "c", 2)), shares("a", 3, "b", 3, "c", 2))
}
