package scheduler

import (
	"strings"
	"testing"
)

const region = "topology.kubernetes.io/region"

// in returns c labelled with key=value pairs.
func in(c Candidate, kv ...string) Candidate {
	c.Labels = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		c.Labels[kv[i]] = kv[i+1]
	}
	return c
}

// inRegion returns an unbounded weight-1 candidate in a region.
func inRegion(name, value string) Candidate { return in(cand(name, 1), region, value) }

// byRegion is a division's replicas summed by region ("-" for clusters without one).
func byRegion(cs []Candidate, d Division) map[string]int32 {
	out := map[string]int32{}
	for _, c := range cs {
		v, ok := c.Labels[region]
		if !ok {
			v = "-"
		}
		out[v] += d.Replicas[c.Name]
	}
	return out
}

func anyway(key string) SpreadConstraint { return SpreadConstraint{TopologyKey: key} }
func strictly(key string) SpreadConstraint {
	return SpreadConstraint{TopologyKey: key, WhenUnsatisfiable: DoNotSchedule}
}

func TestDivideSpread(t *testing.T) {
	capped := func(c Candidate, max int32) Candidate { c.Max = max; return c }
	roomFor := func(c Candidate, n int32) Candidate { c.Estimate = n; return c }
	twoByTwo := []Candidate{inRegion("eu-1", "eu"), inRegion("eu-2", "eu"), inRegion("us-1", "us"), inRegion("us-2", "us")}
	euCapped := []Candidate{capped(inRegion("eu-1", "eu"), 1), capped(inRegion("eu-2", "eu"), 1), inRegion("us-1", "us"), inRegion("us-2", "us")}
	euShort := []Candidate{roomFor(inRegion("eu-1", "eu"), 1), roomFor(inRegion("eu-2", "eu"), 1), inRegion("us-1", "us"), inRegion("us-2", "us")}
	unlabelled := []Candidate{inRegion("eu-1", "eu"), inRegion("eu-2", "eu"), inRegion("us-1", "us"), cand("edge", 1)}
	cases := []struct {
		name      string
		total     int32
		mode      ReplicaMode
		spread    []SpreadConstraint
		clusters  []Candidate
		want      map[string]int32 // the clusters listed
		regions   map[string]int32
		unplaced  int32
		reason    string
		inMessage string
	}{
		{name: "2 regions × 2 clusters: 4 per region, 2 per cluster", total: 8, spread: []SpreadConstraint{anyway(region)}, clusters: twoByTwo,
			want: shares("eu-1", 2, "eu-2", 2, "us-1", 2, "us-2", 2), reason: ReasonPlaced},
		{name: "unequal domain sizes: the lone cluster takes its region's half", total: 8, spread: []SpreadConstraint{anyway(region)},
			clusters: []Candidate{inRegion("eu-1", "eu"), inRegion("eu-2", "eu"), inRegion("eu-3", "eu"), inRegion("us-1", "us")},
			want:     shares("us-1", 4), regions: shares("eu", 4, "us", 4), reason: ReasonPlaced},
		{name: "without spread the same clusters share alike", total: 8,
			clusters: []Candidate{inRegion("eu-1", "eu"), inRegion("eu-2", "eu"), inRegion("eu-3", "eu"), inRegion("us-1", "us")},
			regions:  shares("eu", 6, "us", 2), reason: ReasonPlaced},
		{name: "a domain at its cap, ScheduleAnyway: the rest goes to the other domain", total: 8, spread: []SpreadConstraint{anyway(region)},
			clusters: euCapped, want: shares("eu-1", 1, "eu-2", 1, "us-1", 3, "us-2", 3), reason: ReasonPlaced,
			inMessage: "topology.kubernetes.io/region=eu=2 of 4 hold less than an even part (room or caps of their clusters), skew 4 above maxSkew 1: 2 replicas placed in other domains"},
		{name: "a domain at its cap, DoNotSchedule: maxSkew above it, the rest unplaced", total: 8, spread: []SpreadConstraint{strictly(region)},
			clusters: euCapped, want: shares("eu-1", 1, "eu-2", 1), regions: shares("eu", 2, "us", 3), unplaced: 3, reason: ReasonSpreadUnsatisfiable,
			inMessage: "3 of 8 replicas unplaced: the spread admits 5"},
		{name: "a larger maxSkew lets the other domain take more", total: 8,
			spread:   []SpreadConstraint{{TopologyKey: region, MaxSkew: 3, WhenUnsatisfiable: DoNotSchedule}},
			clusters: euCapped, regions: shares("eu", 2, "us", 5), unplaced: 1, reason: ReasonSpreadUnsatisfiable,
			inMessage: "(DoNotSchedule, maxSkew 3): topology.kubernetes.io/region=eu=2, topology.kubernetes.io/region=us=5 hold 7 of 8"},
		{name: "a domain short of room, ScheduleAnyway: the other domain's room takes it", total: 8, spread: []SpreadConstraint{anyway(region)},
			clusters: euShort, want: shares("eu-1", 1, "eu-2", 1, "us-1", 3, "us-2", 3), reason: ReasonPlaced, inMessage: "2 replicas placed in other domains"},
		{name: "a domain short of room, DoNotSchedule: overfilled, Pending pods", total: 8, spread: []SpreadConstraint{strictly(region)},
			clusters: euShort, want: shares("eu-1", 2, "eu-2", 2, "us-1", 2, "us-2", 2), reason: ReasonInsufficientCapacity, inMessage: "expect Pending pods"},
		{name: "a missing label, ScheduleAnyway: a domain of its own", total: 9, spread: []SpreadConstraint{anyway(region)}, clusters: unlabelled,
			want: shares("edge", 3, "us-1", 3), regions: shares("eu", 3, "us", 3, "-", 3), reason: ReasonPlaced},
		{name: "a missing label, DoNotSchedule: nothing, and named", total: 9, spread: []SpreadConstraint{strictly(region)}, clusters: unlabelled,
			want: shares("edge", 0), regions: shares("eu", 5, "us", 4), reason: ReasonPlaced,
			inMessage: "edge lack label topology.kubernetes.io/region: no replicas (spread DoNotSchedule)"},
		{name: "every label missing, DoNotSchedule: all unplaced, for the spread", total: 3, spread: []SpreadConstraint{strictly(region)},
			clusters: []Candidate{cand("a", 1), cand("b", 1)}, want: shares("a", 0, "b", 0), unplaced: 3, reason: ReasonSpreadUnsatisfiable},
		{name: "minDomains not met, ScheduleAnyway: placed, and reported", total: 8,
			spread:   []SpreadConstraint{{TopologyKey: region, MinDomains: 2}},
			clusters: twoByTwo[:2], want: shares("eu-1", 4, "eu-2", 4), reason: ReasonSpreadUnsatisfiable,
			inMessage: "spread over topology.kubernetes.io/region: 1 domains, minDomains 2"},
		{name: "minDomains not met, DoNotSchedule: maxSkew per domain", total: 8,
			spread:   []SpreadConstraint{{TopologyKey: region, MinDomains: 3, MaxSkew: 2, WhenUnsatisfiable: DoNotSchedule}},
			clusters: twoByTwo, regions: shares("eu", 2, "us", 2), unplaced: 4, reason: ReasonSpreadUnsatisfiable,
			inMessage: "2 domains, minDomains 3: each holds at most maxSkew 2"},
		{name: "minDomains met", total: 8, spread: []SpreadConstraint{{TopologyKey: region, MinDomains: 2, WhenUnsatisfiable: DoNotSchedule}},
			clusters: twoByTwo, regions: shares("eu", 4, "us", 4), reason: ReasonPlaced},
		{name: "weights, min and max inside a domain (worked example A)", total: 12, spread: []SpreadConstraint{{TopologyKey: region, MinDomains: 2}},
			clusters: []Candidate{
				with(inRegion("eu-1", "eu"), func(c *Candidate) { c.Weight, c.Min, c.Max = 2, 1, 6 }),
				with(inRegion("eu-2", "eu"), func(c *Candidate) { c.Min, c.Max = 1, 6 }),
				with(inRegion("us-1", "us"), func(c *Candidate) { c.Min, c.Max = 1, 6 }),
				with(inRegion("us-2", "us"), func(c *Candidate) { c.Min, c.Max = 1, 6 })},
			want: shares("eu-1", 4, "eu-2", 2, "us-1", 3, "us-2", 3), reason: ReasonPlaced},
		{name: "a failed-over cluster leaves its domain to the others there", total: 12, spread: []SpreadConstraint{anyway(region)},
			clusters: []Candidate{inRegion("eu-1", "eu"), inRegion("eu-2", "eu"),
				with(inRegion("us-1", "us"), func(c *Candidate) { c.State = StateFailedOver }), inRegion("us-2", "us")},
			want: shares("eu-1", 3, "eu-2", 3, "us-1", 0, "us-2", 6), reason: ReasonPlaced},
		{name: "a domain of failed-over clusters is no domain", total: 6, spread: []SpreadConstraint{strictly(region)},
			clusters: []Candidate{inRegion("eu-1", "eu"), with(inRegion("us-1", "us"), func(c *Candidate) { c.State = StateFailedOver })},
			want:     shares("eu-1", 6, "us-1", 0), reason: ReasonPlaced},
		{name: "floors beyond the even split are kept", total: 6, spread: []SpreadConstraint{strictly(region)},
			clusters: []Candidate{with(inRegion("eu-1", "eu"), func(c *Candidate) { c.Min = 5 }), inRegion("us-1", "us")},
			want:     shares("eu-1", 5, "us-1", 1), reason: ReasonPlaced},
		{name: "packed packs within each region", total: 8, mode: ModePacked, spread: []SpreadConstraint{anyway(region)},
			clusters: []Candidate{roomFor(inRegion("eu-1", "eu"), 10), roomFor(inRegion("eu-2", "eu"), 9),
				roomFor(inRegion("us-1", "us"), 3), roomFor(inRegion("us-2", "us"), 2)},
			want: shares("eu-1", 4, "eu-2", 0, "us-1", 3, "us-2", 1), reason: ReasonPlaced},
		{name: "nested: region, then zone within each region", total: 8,
			spread: []SpreadConstraint{anyway(region), anyway("zone")},
			clusters: []Candidate{in(cand("eu-a", 1), region, "eu", "zone", "a"), in(cand("eu-b1", 1), region, "eu", "zone", "b"),
				in(cand("eu-b2", 1), region, "eu", "zone", "b"), in(cand("us-c", 1), region, "us", "zone", "c")},
			want: shares("eu-a", 2, "eu-b1", 1, "eu-b2", 1, "us-c", 4), reason: ReasonPlaced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			input := DivideInput{Total: c.total, Mode: c.mode, Spread: c.spread, Clusters: c.clusters, Seed: "shop/web"}
			got := Divide(input)
			for name, n := range c.want {
				if got.Replicas[name] != n {
					t.Errorf("%s: %d, want %d", name, got.Replicas[name], n)
				}
			}
			if c.regions != nil {
				for r, n := range c.regions {
					if sums := byRegion(c.clusters, got); sums[r] != n {
						t.Errorf("region %s: %d, want %d", r, sums[r], n)
					}
				}
			}
			if got.Unplaced != c.unplaced || got.Reason != c.reason {
				t.Errorf("unplaced %d %s, want %d %s", got.Unplaced, got.Reason, c.unplaced, c.reason)
			}
			if !strings.Contains(got.Message, c.inMessage) {
				t.Errorf("message %q does not say %q", got.Message, c.inMessage)
			}
			if why := checkInvariants(input, got); why != "" {
				t.Error(why)
			}
			if t.Failed() {
				t.Logf("got %v: %s", got.Replicas, got.Message)
			}
		})
	}
}

// The spread joins the key: its constraints and the candidates' values of its keys, not
// other labels.
func TestSpreadKey(t *testing.T) {
	base := DivideInput{Total: 4, Spread: []SpreadConstraint{anyway(region)},
		Clusters: []Candidate{in(cand("a", 1), region, "eu", "team", "x"), inRegion("b", "us")}}
	key := divisionKey(base)
	otherLabel := base
	otherLabel.Clusters = []Candidate{in(cand("a", 1), region, "eu", "team", "y"), inRegion("b", "us")}
	if divisionKey(otherLabel) != key {
		t.Error("a label spread does not read changed the key")
	}
	moved := base
	moved.Clusters = []Candidate{inRegion("a", "us"), inRegion("b", "us")}
	unlabelled := base
	unlabelled.Clusters = []Candidate{cand("a", 1), inRegion("b", "us")}
	strict := base
	strict.Spread = []SpreadConstraint{strictly(region)}
	skewed := base
	skewed.Spread = []SpreadConstraint{{TopologyKey: region, MaxSkew: 2}}
	none := base
	none.Spread = nil
	for name, changed := range map[string]DivideInput{"region value": moved, "label removed": unlabelled, "DoNotSchedule": strict, "maxSkew": skewed, "no spread": none} {
		if divisionKey(changed) == key {
			t.Errorf("%s: same key", name)
		}
	}
	defaults := base
	defaults.Spread = []SpreadConstraint{{TopologyKey: region, MaxSkew: 1, MinDomains: 1, WhenUnsatisfiable: ScheduleAnyway}}
	if divisionKey(defaults) != key {
		t.Error("spelling out the defaults changed the key")
	}
}

// Changing the total moves only the difference, domain by domain.
func TestSpreadIncremental(t *testing.T) {
	input := DivideInput{Total: 8, Spread: []SpreadConstraint{anyway(region)}, Seed: "shop/web", Clusters: []Candidate{
		inRegion("eu-1", "eu"), inRegion("eu-2", "eu"), inRegion("us-1", "us"), inRegion("us-2", "us"), inRegion("ap-1", "ap")}}
	first := Divide(input)
	input.Previous, input.Total = &first, 11
	grown := Divide(input)
	for c, n := range first.Replicas {
		if grown.Replicas[c] < n {
			t.Errorf("%s went from %d to %d", c, n, grown.Replicas[c])
		}
	}
	if got := byRegion(input.Clusters, grown); got["eu"] < 3 || got["us"] < 3 || got["ap"] < 3 || got["ap"] > 4 {
		t.Errorf("regions %v", got)
	}
}
