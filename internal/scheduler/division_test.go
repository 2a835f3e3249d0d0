package scheduler

import (
	"maps"
	"strings"
	"testing"
)

func TestDivideRules(t *testing.T) {
	cases := []struct {
		name      string
		in        DivideInput
		want      map[string]int32
		overfill  map[string]int32
		unplaced  int32
		reason    string
		inMessage string
	}{
		{name: "even", in: DivideInput{Total: 6, Clusters: []Candidate{cand("a", 1), cand("b", 1), cand("c", 1)}},
			want: shares("a", 2, "b", 2, "c", 2), reason: ReasonPlaced, inMessage: "6 replicas on 3 of 3 clusters"},
		{name: "weights 2:1 over 2 replicas give 1:1", in: DivideInput{Total: 2, Clusters: []Candidate{cand("a", 2), cand("b", 1)}},
			want: shares("a", 1, "b", 1), reason: ReasonPlaced},
		{name: "weights 170/110/60 over 5", in: DivideInput{Total: 5, Clusters: []Candidate{cand("a", 170), cand("b", 110), cand("c", 60)}},
			want: shares("a", 2, "b", 2, "c", 1), reason: ReasonPlaced},
		{name: "weights 170/110/60 over 6", in: DivideInput{Total: 6, Clusters: []Candidate{cand("a", 170), cand("b", 110), cand("c", 60)}},
			want: shares("a", 3, "b", 2, "c", 1), reason: ReasonPlaced},
		{name: "zero total", in: DivideInput{Total: 0, Clusters: []Candidate{cand("a", 1), cand("b", 1)}},
			want: shares("a", 0, "b", 0), reason: ReasonPlaced},
		{name: "negative total counts as zero", in: DivideInput{Total: -3, Clusters: []Candidate{cand("a", 1)}},
			want: shares("a", 0), reason: ReasonPlaced},
		{name: "no candidates: everything unplaced", in: DivideInput{Total: 3},
			want: shares(), unplaced: 3, reason: ReasonLimitsExceeded, inMessage: "3 of 3 replicas unplaced"},
		{name: "floor first", in: DivideInput{Total: 4, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Min = 3 }), cand("b", 5)}},
			want: shares("a", 3, "b", 1), reason: ReasonPlaced},
		{name: "floors above the total are served by weight", in: DivideInput{Total: 4, Clusters: []Candidate{
			with(cand("a", 2), func(c *Candidate) { c.Min = 3 }), with(cand("b", 1), func(c *Candidate) { c.Min = 3 })}},
			want: shares("a", 3, "b", 1), reason: ReasonPlaced, inMessage: "minimums sum to 6, more than the total 4"},
		{name: "a floor above the hard cap is cut to it", in: DivideInput{Total: 4, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Min, c.LimitFit = 3, 1 }), cand("b", 1)}},
			want: shares("a", 1, "b", 3), reason: ReasonPlaced},
		{name: "max caps", in: DivideInput{Total: 6, Clusters: []Candidate{
			with(cand("a", 10), func(c *Candidate) { c.Max = 2 }), cand("b", 1)}},
			want: shares("a", 2, "b", 4), reason: ReasonPlaced},
		{name: "max 0 takes nothing", in: DivideInput{Total: 3, Clusters: []Candidate{
			with(cand("a", 10), func(c *Candidate) { c.Max = 0 }), cand("b", 1)}},
			want: shares("a", 0, "b", 3), reason: ReasonPlaced},
		{name: "hard caps leave the rest unplaced", in: DivideInput{Total: 5, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Max = 2 }), with(cand("b", 1), func(c *Candidate) { c.LimitFit = 1 })}},
			want: shares("a", 2, "b", 1), unplaced: 2, reason: ReasonLimitsExceeded, inMessage: "2 of 5 replicas unplaced: max and placement limits admit 3"},
		{name: "estimates are soft caps: the rest goes where there is room", in: DivideInput{Total: 6, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Estimate = 1 }), cand("b", 1)}},
			want: shares("a", 1, "b", 5), reason: ReasonPlaced},
		{name: "a full fleet is overfilled by weight, and says so", in: DivideInput{Total: 5, Clusters: []Candidate{
			with(cand("a", 2), func(c *Candidate) { c.Estimate = 1 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 2 })}},
			want: shares("a", 3, "b", 2), overfill: shares("a", 2), reason: ReasonInsufficientCapacity,
			inMessage: "2 replicas above estimated room, expect Pending pods: a=3 (room 1)"},
		{name: "overfill stops at limits", in: DivideInput{Total: 5, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Estimate, c.LimitFit = 1, 2 })}},
			want: shares("a", 2), overfill: shares("a", 1), unplaced: 3, reason: ReasonLimitsExceeded},
		{name: "earlier tiers fill first (on-prem, then cloud)", in: DivideInput{Total: 10, Clusters: []Candidate{
			with(cand("dc-1", 1), func(c *Candidate) { c.LimitFit = 4 }), with(cand("dc-2", 1), func(c *Candidate) { c.LimitFit = 4 }),
			with(cand("aws-1", 1), func(c *Candidate) { c.Tier = 1 }), with(cand("gcp-1", 1), func(c *Candidate) { c.Tier = 1 })}},
			want: shares("dc-1", 4, "dc-2", 4, "aws-1", 1, "gcp-1", 1), reason: ReasonPlaced},
		{name: "a later tier is a warm standby at 0", in: DivideInput{Total: 3, Clusters: []Candidate{
			cand("dc-a", 1), with(cand("dc-b", 1), func(c *Candidate) { c.Tier = 1 })}},
			want: shares("dc-a", 3, "dc-b", 0), reason: ReasonPlaced},
		{name: "weight 0 is a standby", in: DivideInput{Total: 3, Clusters: []Candidate{cand("a", 1), cand("b", 0)}},
			want: shares("a", 3, "b", 0), reason: ReasonPlaced},
		{name: "a standby takes what weighted candidates cannot", in: DivideInput{Total: 3, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Max = 1 }), cand("b", 0)}},
			want: shares("a", 1, "b", 2), reason: ReasonPlaced},
		{name: "failed over and returning clusters get nothing", in: DivideInput{Total: 4, Clusters: []Candidate{
			cand("a", 1), with(cand("b", 1), func(c *Candidate) { c.State = StateFailedOver }),
			with(cand("c", 1), func(c *Candidate) { c.State, c.Min = StateReturning, 2 })}},
			want: shares("a", 4, "b", 0, "c", 0), reason: ReasonPlaced},
		{name: "a cordoned cluster keeps at most its previous share", in: DivideInput{Total: 9, Clusters: []Candidate{
			cand("a", 1), with(cand("b", 1), func(c *Candidate) { c.State = StateCordoned }), cand("c", 1)},
			Previous: &Division{Key: "old", Replicas: shares("a", 2, "b", 2, "c", 2)}},
			want: shares("a", 4, "b", 2, "c", 3), reason: ReasonPlaced},
		{name: "a cordoned cluster never grows, not even by its floor", in: DivideInput{Total: 4, Clusters: []Candidate{
			cand("a", 1), with(cand("b", 1), func(c *Candidate) { c.State, c.Min = StateCordoned, 3 })},
			Previous: &Division{Key: "old", Replicas: shares("a", 3, "b", 1)}},
			want: shares("a", 3, "b", 1), reason: ReasonPlaced},
		{name: "capacity: in proportion to estimates", in: DivideInput{Total: 5, Mode: ModeCapacity, Clusters: []Candidate{
			with(cand("a", 100), func(c *Candidate) { c.Estimate = 2 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 8 })}},
			want: shares("a", 1, "b", 4), reason: ReasonPlaced},
		{name: "capacity: an unknown estimate weighs the mean of the known ones", in: DivideInput{Total: 8, Mode: ModeCapacity, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Estimate = 2 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 6 }), cand("c", 1)}},
			want: shares("a", 1, "b", 4, "c", 3), reason: ReasonPlaced},
		{name: "capacity: no room left anywhere weighs nothing but still overfills", in: DivideInput{Total: 2, Mode: ModeCapacity, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Estimate = 0 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 1 })}},
			want: shares("a", 0, "b", 2), overfill: shares("b", 1), reason: ReasonInsufficientCapacity},
		{name: "packed: the biggest first", in: DivideInput{Total: 6, Mode: ModePacked, Clusters: []Candidate{
			with(cand("gpu-a", 1), func(c *Candidate) { c.Estimate = 3 }), with(cand("gpu-b", 1), func(c *Candidate) { c.Estimate = 8 })}},
			want: shares("gpu-a", 0, "gpu-b", 6), reason: ReasonPlaced},
		{name: "packed: then the next", in: DivideInput{Total: 10, Mode: ModePacked, Clusters: []Candidate{
			with(cand("gpu-a", 1), func(c *Candidate) { c.Estimate = 3 }), with(cand("gpu-b", 1), func(c *Candidate) { c.Estimate = 8 })}},
			want: shares("gpu-a", 2, "gpu-b", 8), reason: ReasonPlaced},
		{name: "packed: the clusters already used first", in: DivideInput{Total: 4, Mode: ModePacked, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Estimate = 3 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 8 })},
			Previous: &Division{Key: "old", Replicas: shares("a", 3, "b", 0)}},
			want: shares("a", 3, "b", 1), reason: ReasonPlaced},
		{name: "packed: floors before packing", in: DivideInput{Total: 4, Mode: ModePacked, Clusters: []Candidate{
			with(cand("a", 1), func(c *Candidate) { c.Min = 1 }), with(cand("b", 1), func(c *Candidate) { c.Estimate = 8 })}},
			want: shares("a", 4, "b", 0), reason: ReasonPlaced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Seed = "shop/web"
			got := Divide(c.in)
			if !maps.Equal(got.Replicas, c.want) || !maps.Equal(got.Overfill, c.overfill) || got.Unplaced != c.unplaced || got.Reason != c.reason {
				t.Errorf("got %v overfill %v unplaced %d %s (%s)\nwant %v overfill %v unplaced %d %s",
					got.Replicas, got.Overfill, got.Unplaced, got.Reason, got.Message, c.want, c.overfill, c.unplaced, c.reason)
			}
			if !strings.Contains(got.Message, c.inMessage) {
				t.Errorf("message %q does not say %q", got.Message, c.inMessage)
			}
			if why := checkInvariants(c.in, got); why != "" {
				t.Error(why)
			}
		})
	}
}
