package scheduler

import (
	"fmt"
	"reflect"
	"testing"
)

// decodeInput turns fuzz bytes into a division problem: a header byte for the mode, then seven
// bytes per candidate (tier and state, weight, min, max, limit, estimate, previous share).
func decodeInput(total uint16, data []byte, seed string, rebalance bool) DivideInput {
	modes := []ReplicaMode{ModeWeighted, ModeCapacity, ModePacked, ""}
	states := []DecisionState{StateActive, StateCordoned, StateFailedOver, StateReturning}
	in := DivideInput{Total: int32(total), Seed: seed, Rebalance: rebalance}
	if len(data) == 0 {
		return in
	}
	in.Mode, data = modes[int(data[0])%len(modes)], data[1:]
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
			Weight: int32(data[1]), Min: int32(data[2] % 16), Max: bounded(data[3]), LimitFit: bounded(data[4]), Estimate: bounded(data[5])})
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
		lower := Divide(DivideInput{Total: in.Total - 1, Mode: in.Mode, Clusters: in.Clusters, Previous: in.Previous, Seed: in.Seed, Rebalance: true})
		higher := Divide(in)
		for c, n := range lower.Replicas {
			if higher.Replicas[c] < n {
				t.Fatalf("raising the total lowered %s: %v, then %v", c, lower.Replicas, higher.Replicas)
			}
		}
	})
}
