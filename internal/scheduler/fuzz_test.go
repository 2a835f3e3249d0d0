package scheduler

import (
	"fmt"
	"reflect"
	"testing"
)

// decodeInput turns fuzz bytes into a division problem: a header byte for the mode and the
// spread, then seven bytes per candidate (tier, state and region; weight; min and zone; max;
// limit; estimate; previous share).
func decodeInput(total uint16, data []byte, seed string, rebalance bool) DivideInput {
	modes := []ReplicaMode{ModeWeighted, ModeCapacity, ModePacked, ""}
	states := []DecisionState{StateActive, StateCordoned, StateFailedOver, StateReturning}
	in := DivideInput{Total: int32(total), Seed: seed, Rebalance: rebalance}
	if len(data) == 0 {
		return in
	}
	in.Mode, in.Spread, data = modes[int(data[0])%len(modes)], decodeSpread(data[0]), data[1:]
	bounded := func(b byte) int32 {
		if b >= 200 {
			return Unbounded
		}
		return int32(b)
	}
	var previous map[string]int32
	for i := 0; len(data) >= 7 && i < 16; i, data = i+1, data[7:] {
		name := fmt.Sprintf("c%d", i)
		in.Clusters = append(in.Clusters, Candidate{Name: name, Tier: int(data[0] % 3), State: states[int(data[0]/3)%len(states)],
			Weight: int32(data[1]), Min: int32(data[2] % 16), Max: bounded(data[3]), LimitFit: bounded(data[4]), Estimate: bounded(data[5]),
			Labels: decodeLabels(data[0]/12, data[2]/16)})
		if data[6] < 128 {
			if previous == nil {
				previous = map[string]int32{}
			}
			previous[name] = int32(data[6] % 64)
		}
	}
	if previous != nil {
		in.Previous = &Division{Replicas: previous}
	}
	return in
}

// decodeSpread reads the spread from the header byte: none, region, region strictly, or
// region then zone strictly; then maxSkew and minDomains.
func decodeSpread(h byte) []SpreadConstraint {
	skew, domains := int32(1+(h/16)%3), int32(1+(h/48)%3)
	region := SpreadConstraint{TopologyKey: "region", MaxSkew: skew, MinDomains: domains}
	switch (h / 4) % 4 {
	case 1:
		return []SpreadConstraint{region}
	case 2:
		region.WhenUnsatisfiable = DoNotSchedule
		return []SpreadConstraint{region}
	case 3:
		return []SpreadConstraint{region, {TopologyKey: "zone", MaxSkew: skew, WhenUnsatisfiable: DoNotSchedule}}
	}
	return nil
}

// decodeLabels gives a candidate one of three regions and two zones, or neither.
func decodeLabels(region, zone byte) map[string]string {
	labels := map[string]string{}
	if region%4 < 3 {
		labels["region"] = string('a' + rune(region%4))
	}
	if zone%3 < 2 {
		labels["zone"] = string('x' + rune(zone%3))
	}
	return labels
}

// FuzzDivide checks the invariants of Divide: the sum is min(total, Σ hard caps), nobody is
// above its hard cap or below its floor while the total allows, candidate order does not
// matter, a second division from the first returns it, and a higher total lowers no share.
func FuzzDivide(f *testing.F) {
	f.Add(uint16(7), []byte{0, 0, 1, 0, 255, 255, 255, 255, 1, 2, 0, 255, 255, 255, 255}, "shop/web", false)
	f.Add(uint16(10), []byte{0, 0, 1, 0, 255, 4, 255, 255, 0, 1, 0, 255, 4, 255, 255, 1, 1, 0, 255, 255, 255, 255, 1, 1, 0, 255, 255, 255, 255}, "tiers", false)
	f.Add(uint16(6), []byte{2, 0, 1, 0, 255, 255, 3, 255, 0, 1, 0, 255, 255, 8, 255}, "packed", true)
	f.Add(uint16(5), []byte{1, 0, 1, 0, 255, 255, 2, 1, 0, 1, 0, 255, 255, 8, 4, 3, 1, 2, 255, 255, 255, 0}, "capacity", false)
	f.Add(uint16(9), []byte{0, 3, 1, 3, 2, 255, 255, 5, 6, 0, 2, 255, 1, 0, 4, 9, 3, 0, 0, 255, 255, 1}, "states", false)
	f.Add(uint16(0), []byte{}, "", false)
	f.Add(uint16(8), []byte{4, 0, 1, 0, 255, 255, 255, 255, 0, 1, 0, 255, 255, 255, 255, 12, 1, 0, 255, 255, 255, 255, 12, 1, 0, 255, 255, 255, 255}, "spread", false)
	f.Add(uint16(8), []byte{8, 0, 1, 0, 1, 255, 255, 255, 0, 1, 0, 1, 255, 255, 255, 12, 1, 0, 255, 255, 255, 255, 36, 1, 0, 255, 255, 255, 255}, "strict", false)
	f.Add(uint16(9), []byte{76, 0, 1, 16, 255, 255, 255, 3, 0, 1, 0, 255, 255, 2, 255, 12, 2, 32, 255, 255, 255, 1, 36, 1, 0, 255, 255, 255, 0}, "nested", false)
	f.Fuzz(func(t *testing.T, total uint16, data []byte, seed string, rebalance bool) {
		in := decodeInput(total, data, seed, rebalance)
		got := Divide(in)
		if why := checkInvariants(in, got); why != "" {
			t.Fatalf("%s: %+v for %+v", why, got, in)
		}
		reversed := in
		reversed.Clusters = make([]Candidate, len(in.Clusters))
		for i, c := range in.Clusters {
			reversed.Clusters[len(in.Clusters)-1-i] = c
		}
		if again := Divide(reversed); !reflect.DeepEqual(again, got) {
			t.Fatalf("candidate order matters: %v, then %v", got.Replicas, again.Replicas)
		}
		next := in
		next.Previous = &got
		if again := Divide(next); !reflect.DeepEqual(again, got) {
			t.Fatalf("not idempotent: %+v, then %+v", got, again)
		}
		in.Rebalance, in.Total = true, in.Total+1
		lower := Divide(DivideInput{Total: in.Total - 1, Mode: in.Mode, Spread: in.Spread, Clusters: in.Clusters, Previous: in.Previous, Seed: in.Seed, Rebalance: true})
		higher := Divide(in)
		for c, n := range lower.Replicas {
			if higher.Replicas[c] < n {
				t.Fatalf("raising the total lowered %s: %v, then %v", c, lower.Replicas, higher.Replicas)
			}
		}
	})
}
