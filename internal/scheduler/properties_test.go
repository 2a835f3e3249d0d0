package scheduler

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomInput draws a division problem small enough to reason about and rich enough to meet
// every rule: modes, tiers, states, floors, caps, limits, estimates and a previous division.
func randomInput(r *rand.Rand) DivideInput {
	modes := []ReplicaMode{"", ModeWeighted, ModeCapacity, ModePacked}
	states := []DecisionState{"", StateActive, StateActive, StateActive, StateCordoned, StateFailedOver, StateReturning}
	in := DivideInput{Total: int32(r.IntN(40)), Mode: modes[r.IntN(len(modes))], Seed: fmt.Sprintf("ns/w-%d", r.Int())}
	optional := func(n int) int32 {
		if r.IntN(3) == 0 {
			return Unbounded
		}
		return int32(r.IntN(n))
	}
	for i := range r.IntN(7) {
		in.Clusters = append(in.Clusters, Candidate{Name: fmt.Sprintf("c%d", i), Tier: r.IntN(3), State: states[r.IntN(len(states))],
			Weight: int32(r.IntN(12)), Min: int32(r.IntN(4)) * int32(r.IntN(2)), Max: optional(15), LimitFit: optional(15), Estimate: optional(15)})
	}
	if r.IntN(2) == 0 {
		addSpread(r, &in)
	}
	if r.IntN(2) == 0 {
		prev := &Division{Replicas: map[string]int32{}}
		for _, c := range in.Clusters {
			prev.Replicas[c.Name] = int32(r.IntN(8))
		}
		in.Previous = prev
	}
	return in
}

// addSpread gives in one or two spread constraints (region, then zone) and its candidates
// regions and zones, a few of them missing.
func addSpread(r *rand.Rand, in *DivideInput) {
	for _, key := range []string{"region", "zone"}[:1+r.IntN(2)] {
		c := SpreadConstraint{TopologyKey: key, MaxSkew: int32(r.IntN(4)), MinDomains: int32(r.IntN(4))}
		if r.IntN(2) == 0 {
			c.WhenUnsatisfiable = DoNotSchedule
		}
		in.Spread = append(in.Spread, c)
	}
	for i := range in.Clusters {
		in.Clusters[i].Labels = map[string]string{}
		if r.IntN(8) > 0 {
			in.Clusters[i].Labels["region"] = fmt.Sprint("r", r.IntN(3))
		}
		if r.IntN(8) > 0 {
			in.Clusters[i].Labels["zone"] = fmt.Sprint("z", r.IntN(2))
		}
	}
}

func forRandomInputs(t *testing.T, n int, check func(t *testing.T, in DivideInput)) {
	r := rand.New(rand.NewPCG(13, 2))
	for i := range n {
		in := randomInput(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) { check(t, in) })
		if t.Failed() {
			t.Fatalf("input: %+v previous %+v", in, in.Previous)
		}
	}
}

// Σ Replicas = min(Total, Σ hard caps); nobody above its hard cap, nor below its floor while
// the total allows; Unplaced is the rest.
func TestDivideBounds(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		if why := checkInvariants(in, Divide(in)); why != "" {
			t.Error(why)
		}
	})
}

// House monotone: the same inputs with a higher total never lower a share.
func TestDivideHouseMonotone(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		in.Rebalance = true
		lower := Divide(in)
		in.Total++
		higher := Divide(in)
		for c, n := range lower.Replicas {
			if higher.Replicas[c] < n {
				t.Errorf("%s: %d at total %d, %d at %d", c, n, in.Total-1, higher.Replicas[c], in.Total)
			}
		}
	})
}

// Fresh path: removing a candidate never lowers another's share. (ModeCapacity weighs an unknown
// estimate by the others' mean, which removing one changes, so its estimates are made known.
// DoNotSchedule spread is left out: it holds domains to maxSkew above the lowest, so a
// domain that loses a cluster lowers what the others may hold. With spread, a domain's
// previous share breaks its ties, and removing a member lowers it, so there is no Previous.)
func TestDivideRemovingACandidate(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		if len(in.Clusters) == 0 {
			return
		}
		if in.Mode == ModeCapacity {
			for i := range in.Clusters {
				in.Clusters[i].Estimate = max(in.Clusters[i].Estimate, 1)
			}
		}
		if slices.ContainsFunc(in.Spread, SpreadConstraint.strict) {
			return // a smaller domain lowers what DoNotSchedule lets the others hold
		}
		if len(in.Spread) > 0 {
			in.Previous = nil // a domain's previous share breaks its ties, and a removal lowers it
		}
		in.Rebalance = true
		all := Divide(in)
		gone := in.Clusters[0].Name
		in.Clusters = in.Clusters[1:]
		fewer := Divide(in)
		for c, n := range fewer.Replicas {
			if n < all.Replicas[c] {
				t.Errorf("removing %s lowered %s from %d to %d", gone, c, all.Replicas[c], n)
			}
		}
	})
}

func TestDivideIgnoresCandidateOrder(t *testing.T) {
	forRandomInputs(t, 2000, func(t *testing.T, in DivideInput) {
		want := Divide(in)
		r := rand.New(rand.NewPCG(uint64(len(in.Seed)), 7))
		r.Shuffle(len(in.Clusters), func(i, j int) { in.Clusters[i], in.Clusters[j] = in.Clusters[j], in.Clusters[i] })
		if got := Divide(in); !reflect.DeepEqual(got, want) {
			t.Errorf("shuffled: %v, want %v", got.Replicas, want.Replicas)
		}
	})
}

// Divide(in with Previous = Divide(in)) == Divide(in), on every path.
func TestDivideIdempotent(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		in.Rebalance = len(in.Seed)%2 == 0
		first := Divide(in)
		in.Previous = &first
		if again := Divide(in); !reflect.DeepEqual(again, first) {
			t.Errorf("again: %+v\nfirst: %+v", again, first)
		}
	})
}

// Incremental from a fresh Previous gives exactly the fresh result for the new total. Known
// exception, left out: ModePacked with a candidate whose estimated room is not above its floor
// (its packing rank depends on whether it was filled, which a fresh division does not know).
func TestDivideIncrementalFromFreshIsFresh(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		if in.Mode == ModePacked && slices.ContainsFunc(in.Clusters, func(c Candidate) bool { return c.Estimate >= 0 && c.Estimate <= c.Min }) {
			return
		}
		in.Previous = nil
		for i := range in.Clusters {
			if in.Clusters[i].State == StateCordoned {
				in.Clusters[i].State = StateActive // its cap is its previous share: not the same inputs
			}
		}
		from := Divide(in)
		newTotal := int32(len(in.Seed) * 7 % 45)
		in.Total = newTotal
		fresh := Divide(in)
		in.Previous = &from
		if choosePath(in, divisionKey(in)) != pathIncremental && newTotal != int32(previousTotal(&from)) {
			t.Fatal("not the incremental path")
		}
		if got := Divide(in); !maps.Equal(got.Replicas, fresh.Replicas) {
			t.Errorf("incremental %v, fresh %v", got.Replicas, fresh.Replicas)
		}
	})
}

// No name bias: over 10,000 workloads, each of n equal-weight clusters gets the odd replica
// with frequency 1/n ± 2%.
func TestDivideHasNoNameBias(t *testing.T) {
	const workloads = 10000
	for n := 2; n <= 6; n++ {
		var cs []Candidate
		for i := range n {
			cs = append(cs, cand(fmt.Sprintf("cluster-%d", i), 1))
		}
		odd := map[string]int{}
		for w := range workloads {
			d := Divide(DivideInput{Total: int32(2*n + 1), Clusters: cs, Seed: fmt.Sprintf("shop/web-%d", w)})
			for c, k := range d.Replicas {
				if k == 3 {
					odd[c]++
				}
			}
		}
		for _, c := range cs {
			if f := float64(odd[c.Name]) / workloads; math.Abs(f-1/float64(n)) > 0.02 {
				t.Errorf("%d clusters: %s got the odd replica of %.3f of the workloads, want %.3f ± 0.02", n, c.Name, f, 1/float64(n))
			}
		}
	}
}

// The jump start hands out exactly the seats the seat-by-seat fill would.
func TestJumpStartChangesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for i := range 2000 {
		n := 1 + r.IntN(6)
		build := func() []*member {
			rr := rand.New(rand.NewPCG(uint64(i), 1))
			var ms []*member
			for j := range n {
				lo := int32(rr.IntN(5))
				hi := lo + int32(rr.IntN(500))
				if rr.IntN(4) == 0 {
					hi = unlimited
				}
				seats := lo
				b := &bounds{name: fmt.Sprint(j), weight: uint64(1 + rr.IntN(3)*rr.IntN(1000)), held: int32(rr.IntN(100)), hash: rr.Uint64()}
				ms = append(ms, &member{b: b, seats: &seats, hi: hi})
			}
			return ms
		}
		var room int64
		for _, m := range build() {
			room += int64(m.hi - *m.seats)
		}
		need := min(room, int64(r.IntN(3000)))
		jumped, stepped := build(), build()
		fillGroup(jumped, need, false)
		fillWebster(stepped, need)
		for j := range jumped {
			if *jumped[j].seats != *stepped[j].seats {
				t.Fatalf("case %d: jump start gave %d to %s, seat by seat %d", i, *jumped[j].seats, jumped[j].b.name, *stepped[j].seats)
			}
		}
	}
}

// Huge totals take a handful of steps, not one per replica.
func TestDivideHugeTotals(t *testing.T) {
	in := DivideInput{Total: math.MaxInt32, Seed: "s", Clusters: []Candidate{cand("a", 170), cand("b", 110), cand("c", 60),
		with(cand("d", 7), func(c *Candidate) { c.Min = 1000 }), with(cand("e", 1), func(c *Candidate) { c.Max = 5 })}}
	d := Divide(in)
	if why := checkInvariants(in, d); why != "" {
		t.Fatal(why)
	}
	in.Previous, in.Total = &d, 12345
	small := Divide(in)
	if why := checkInvariants(in, small); why != "" {
		t.Fatal(why)
	}
	if got := slices.Collect(maps.Values(small.Replicas)); len(got) != 5 {
		t.Fatal(got)
	}
}

// Spread keeps the domains of its first constraint within maxSkew of each other under
// DoNotSchedule, and within one replica under ScheduleAnyway when no cap or room binds
// (minimums apart, which may exceed any skew).
func TestSpreadSkew(t *testing.T) {
	forRandomInputs(t, 3000, func(t *testing.T, in DivideInput) {
		if len(in.Spread) == 0 || slices.ContainsFunc(in.Clusters, func(c Candidate) bool { return c.Min > 0 }) {
			return
		}
		c := in.Spread[0]
		if !c.strict() {
			for i := range in.Clusters {
				in.Clusters[i].Max, in.Clusters[i].LimitFit, in.Clusters[i].Estimate = Unbounded, Unbounded, Unbounded
				if in.Clusters[i].State == StateCordoned {
					in.Clusters[i].State = StateActive
				}
			}
			in.Spread = in.Spread[:1]
		}
		d := Divide(in)
		bySeats := map[string]int32{}
		for _, cand := range in.Clusters {
			if !takesPart(cand) || lackedStrictKey(cand, in.Spread) != "" {
				continue
			}
			label, ok := cand.Labels[c.TopologyKey]
			if !ok {
				label = "own/" + cand.Name
			}
			bySeats[label] += d.Replicas[cand.Name]
		}
		seats := slices.Collect(maps.Values(bySeats))
		limit := int64(1)
		if c.strict() {
			limit = c.maxSkew()
		}
		if got := skew(seats); got > limit {
			t.Errorf("skew %d above %d: %v (%s)", got, limit, bySeats, d.Message)
		}
	})
}

// No name bias across domains: over 10,000 workloads each of two equal regions gets the odd
// replica half of the time, ± 2%.
func TestSpreadHasNoNameBias(t *testing.T) {
	const workloads = 10000
	cs := []Candidate{in(cand("a-1", 1), "region", "a"), in(cand("a-2", 1), "region", "a"), in(cand("b-1", 1), "region", "b"), in(cand("b-2", 1), "region", "b")}
	odd := 0
	for w := range workloads {
		d := Divide(DivideInput{Total: 5, Spread: []SpreadConstraint{{TopologyKey: "region"}}, Clusters: cs, Seed: fmt.Sprintf("shop/web-%d", w)})
		if d.Replicas["a-1"]+d.Replicas["a-2"] == 3 {
			odd++
		}
	}
	if f := float64(odd) / workloads; math.Abs(f-0.5) > 0.02 {
		t.Errorf("region a got the odd replica of %.3f of the workloads, want 0.5 ± 0.02", f)
	}
}
