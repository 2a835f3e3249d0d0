package holds_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// kinds are the owner kinds, as each adapter fills a Pass: the same safety cases run
// against each of them.
var kinds = []struct {
	name    string
	pass    holds.Pass
	command string // what the confirmation command starts with
}{
	{"Propagation", holds.Pass{Owner: render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, PlacementName: "team/all", PlacementRef: "spec.placementRef"},
		"kubectl annotate --overwrite -n team propagation web flotilla.dev/confirm-prune=clusters-"},
	{"ClusterPropagation", holds.Pass{Owner: render.Owner{Kind: "ClusterPropagation", Name: "base"}, PlacementName: "flotilla-system/all", PlacementRef: "spec.placementRef"},
		"kubectl annotate --overwrite clusterpropagation base flotilla.dev/confirm-prune=clusters-"},
	{"transparent Deployment", holds.Pass{Owner: render.Owner{Kind: "Deployment.apps", Namespace: "shop", Name: "cart"}, PlacementName: "shop/all", PlacementRef: "the label flotilla.dev/placement"},
		"kubectl annotate --overwrite -n shop deployment.apps cart flotilla.dev/confirm-prune=clusters-"},
	{"APIPropagation", holds.Pass{Owner: render.Owner{Kind: "ResourceGraphDefinition.kro.run", Name: "webapp"}, ConfirmOn: "apipropagation platform", PlacementName: "flotilla-system/all", PlacementRef: "spec.placementRef"},
		"kubectl annotate --overwrite apipropagation platform flotilla.dev/confirm-prune=clusters-"},
}

func placement(generation, observed int64) *flotillav1.Placement {
	return &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "all", Generation: generation},
		Status: flotillav1.PlacementStatus{ObservedGeneration: observed}}
}

// token is the confirmation a message names.
func token(msg string) string { return msg[strings.LastIndex(msg, "=")+1:] }

func TestCheckEveryKind(t *testing.T) {
	cases := []struct {
		name              string
		placement         *flotillav1.Placement
		released          bool
		chosen, delivered []string
		reason            string // "" for no hold
		deliver           bool
		confirmable       bool
	}{
		{"a cluster dropped, others chosen", placement(2, 2), false, []string{"a"}, []string{"a", "b"}, "", false, false},
		{"Placement chooses nothing while delivered", placement(2, 2), false, nil, []string{"a", "b"}, flotillav1.ReasonPruneBlocked, false, true},
		{"Placement chooses nothing, nothing delivered", placement(2, 2), false, nil, nil, "", false, false},
		{"Placement missing", nil, false, nil, []string{"a"}, flotillav1.ReasonPlacementNotFound, false, false},
		{"Placement status behind its spec", placement(3, 2), false, []string{"a"}, []string{"a", "b"}, flotillav1.ReasonPlacementPending, true, false},
		{"Placement created again, no status yet", placement(1, 0), false, nil, []string{"a"}, flotillav1.ReasonPlacementPending, true, false},
		{"owner names no Placement any more, delivered", nil, true, nil, []string{"b", "a"}, flotillav1.ReasonPruneBlocked, false, true},
		{"owner names no Placement any more, delivered nowhere", nil, true, nil, nil, "", false, false},
	}
	for _, k := range kinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				p := k.pass
				p.Placement, p.Chosen, p.Delivered, p.Budget = c.placement, c.chosen, c.delivered, holds.DefaultBudget
				if c.released {
					p.Released, p.Undo = "the label was removed", "Label it again"
				}
				h := holds.Check(p)
				if c.reason == "" {
					if h != nil {
						t.Fatalf("held: %s: %s", h.Reason, h.Message)
					}
					return
				}
				if h == nil || h.Reason != c.reason || h.Deliver != c.deliver {
					t.Fatalf("Check = %+v, want reason %s, deliver %v", h, c.reason, c.deliver)
				}
				if !c.confirmable {
					p.Confirmed = holds.Token(0, c.delivered)
					if again := holds.Check(p); again == nil {
						t.Fatalf("a hold no confirmation ends was lifted by %s", p.Confirmed)
					}
					return
				}
				if !strings.Contains(h.Message, k.command) {
					t.Fatalf("message %q does not name the command %q…", h.Message, k.command)
				}
				for _, c := range c.delivered {
					if !strings.Contains(h.Message, c) {
						t.Errorf("message %q does not name cluster %s", h.Message, c)
					}
				}
				p.Confirmed = token(h.Message)
				if again := holds.Check(p); again != nil {
					t.Fatalf("confirmed with %s and still held: %s", p.Confirmed, again.Message)
				}
				// The confirmation is for this removal only: not after the Placement changed
				// again, nor for a removal from more clusters.
				if p.Placement != nil {
					p.Placement = placement(p.Placement.Generation+2, p.Placement.Generation+2)
					if again := holds.Check(p); again == nil {
						t.Errorf("a confirmation given before the Placement changed again lifted its hold")
					}
					p.Placement = c.placement
				}
				// As the removal goes on, fewer clusters are left: still confirmed.
				p.Delivered = c.delivered[1:]
				if again := holds.Check(p); again != nil && len(p.Delivered) > 0 {
					t.Errorf("the removal confirmed is held again half way: %s", again.Message)
				}
			})
		}
	}
}

func TestLeavingEveryKind(t *testing.T) {
	cases := []struct {
		name            string
		chosen, leaving []string
		budget          int
		held            bool
	}{
		{"one of three clusters leaves", []string{"b", "c"}, []string{"a"}, 50, false},
		{"shrinking from three clusters to one", []string{"c"}, []string{"a", "b"}, 50, true},
		{"a move from one cluster to another", []string{"b"}, []string{"a"}, 50, false},
		{"ten clusters to one", []string{"j"}, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, 50, true},
		{"budget 0: any cluster leaving waits", []string{"b", "c"}, []string{"a"}, 0, true},
		{"budget 100: shrinking to one goes ahead", []string{"c"}, []string{"a", "b"}, 100, false},
		{"nothing leaves", []string{"a"}, nil, 0, false},
	}
	for _, k := range kinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				p := k.pass
				p.Placement, p.Chosen, p.Budget = placement(4, 4), c.chosen, c.budget
				msg := p.Leaving(c.leaving)
				if (msg != "") != c.held {
					t.Fatalf("Leaving = %q, want held=%v", msg, c.held)
				}
				if !c.held {
					return
				}
				if !strings.Contains(msg, k.command) {
					t.Fatalf("message %q does not name the command %q…", msg, k.command)
				}
				p.Confirmed = token(msg)
				if again := p.Leaving(c.leaving); again != "" {
					t.Errorf("confirmed with %q and still held: %s", p.Confirmed, again)
				}
				if other := p.Leaving(append([]string{"z"}, c.leaving...)); other == "" {
					t.Errorf("a confirmation of one removal lifted another")
				}
				// A confirmed removal from every cluster covers each cluster as it leaves
				// while the Placement chooses none, and never a removal while it chooses
				// some: an old confirmation is not replayed onto a later shrink.
				p.Confirmed = holds.Token(4, nil)
				if again := p.Leaving(c.leaving); again == "" {
					t.Errorf("a confirmation of removing every cluster lifted a removal from %v while %v stay chosen", c.leaving, c.chosen)
				}
				everywhere := p
				everywhere.Chosen = nil
				if again := everywhere.Leaving(c.leaving); again != "" {
					t.Errorf("a confirmed removal from every cluster is held: %s", again)
				}
			})
		}
	}
}

// TestPlanned: a plan shows Check's hold first, else the fleet budget's refusal for the
// clusters the records name that are no longer chosen, and nothing when neither holds.
func TestPlanned(t *testing.T) {
	base := kinds[0].pass
	base.Placement, base.Budget = placement(4, 4), holds.DefaultBudget
	cases := []struct {
		name              string
		chosen, delivered []string
		pending           bool
		reason            string // "" for no hold
		deliver           bool
		names             []string // clusters the message names
	}{
		{"nothing leaves", []string{"a", "b"}, []string{"a"}, false, "", false, nil},
		{"one of three leaves", []string{"b", "c"}, []string{"a", "b", "c"}, false, "", false, nil},
		{"two of three leave", []string{"c"}, []string{"a", "b", "c"}, false, flotillav1.ReasonPruneBlocked, true, []string{"a", "b"}},
		{"everything leaves", nil, []string{"a", "b"}, false, flotillav1.ReasonPruneBlocked, false, []string{"a", "b"}},
		{"the Placement has not caught up", []string{"c"}, []string{"a", "b", "c"}, true, flotillav1.ReasonPlacementPending, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base
			p.Chosen, p.Delivered = c.chosen, c.delivered
			if c.pending {
				p.Placement = placement(5, 4)
			}
			h := holds.Planned(p)
			if c.reason == "" {
				if h != nil {
					t.Fatalf("held: %s", h.Message)
				}
				return
			}
			if h == nil || h.Reason != c.reason || h.Deliver != c.deliver {
				t.Fatalf("Planned = %+v, want reason %s, deliver %v", h, c.reason, c.deliver)
			}
			for _, name := range c.names {
				if !strings.Contains(h.Message, name+",") && !strings.Contains(h.Message, name+")") {
					t.Errorf("message %q does not name cluster %s", h.Message, name)
				}
			}
			if c.names != nil {
				p.Confirmed = token(h.Message)
				if again := holds.Planned(p); again != nil {
					t.Errorf("confirmed as the message says and still held: %s", again.Message)
				}
			}
		})
	}
}

// FuzzNeverEverywhereUnconfirmed: whatever the Placement says, a pass never removes an owner
// from every cluster it is on, nor from more than the budget's share of the clusters it
// touches, unless the removal from exactly those clusters was confirmed; a missing or lagging
// Placement removes nothing at all.
func FuzzNeverEverywhereUnconfirmed(f *testing.F) {
	f.Add(uint8(3), uint8(0), int64(2), int64(2), uint8(50), uint8(0), "")
	f.Add(uint8(5), uint8(1), int64(4), int64(3), uint8(0), uint8(0), "clusters-x")
	f.Add(uint8(2), uint8(0), int64(1), int64(0), uint8(100), uint8(1), "")
	f.Add(uint8(2), uint8(0), int64(1), int64(0), uint8(100), uint8(2), "")
	f.Fuzz(func(t *testing.T, delivered, chosen uint8, generation, observed int64, budget, shape uint8, confirmed string) {
		names := func(n uint8, from int) []string {
			var out []string
			for i := range int(n % 12) {
				out = append(out, string(rune('a'+from+i)))
			}
			return out
		}
		p := holds.Pass{Owner: render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, Delivered: names(delivered, 0),
			Budget: int(budget % 101), Confirmed: confirmed}
		var gen int64
		switch shape % 3 {
		case 0: // a Placement
			p.Placement, p.Chosen, gen = placement(generation, observed), names(chosen, 6), generation
		case 1: // released: no Placement named any more
			p.Released = "released"
		} // 2: the Placement is missing
		var leaving []string
		for _, c := range p.Delivered {
			if !slices.Contains(p.Chosen, c) {
				leaving = append(leaving, c)
			}
		}
		h := holds.Check(p)
		if h != nil && (h.Deliver || h.Reason == flotillav1.ReasonPlacementNotFound) {
			return // nothing is removed: fanout keeps every cluster that left (Pass.Held)
		}
		if len(leaving) == 0 {
			return
		}
		exactly := confirmed == holds.Token(gen, slices.Sorted(slices.Values(leaving)))
		if h == nil && len(p.Chosen) == 0 && confirmed != holds.Token(gen, nil) {
			t.Fatalf("removal from every cluster (%v) not held, confirmed %q", leaving, confirmed)
		}
		if h == nil && p.Leaving(leaving) == "" && len(leaving)*100 > p.Budget*(len(p.Chosen)+len(leaving)) && !exactly &&
			(len(p.Chosen) > 0 || confirmed != holds.Token(gen, nil)) {
			t.Fatalf("removal from %d of %d clusters over budget %d not held", len(leaving), len(p.Chosen)+len(leaving), p.Budget)
		}
	})
}
