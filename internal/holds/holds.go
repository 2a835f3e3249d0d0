package holds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// DefaultBudget is the fleet prune budget of an owner that sets none, in percent of the
// clusters one change touches: a move from one cluster to another (half of them) is within it.
const DefaultBudget = 50

// Pass is what an owner's pass knows of its fleet when it decides what it may remove.
type Pass struct {
	// Owner is who is held; ConfirmOn, when set, is the object a confirmation annotates
	// instead of the owner (decide.ConfirmCommand).
	Owner     render.Owner
	ConfirmOn string
	// Placement is the owner's Placement, nil when it does not exist. PlacementName
	// ("namespace/name") and PlacementRef (the field or label that names it) are for messages.
	Placement                   *flotillav1.Placement
	PlacementName, PlacementRef string
	// Released, when set, says how the owner stopped naming a Placement, and Undo how to
	// undo it: every cluster it is on is leaving.
	Released, Undo string
	// Chosen are the clusters the Placement chooses; Delivered those the owner's records name.
	Chosen, Delivered []string
	// Confirmed is the owner's flotilla.dev/confirm-prune value.
	Confirmed string
	// Budget is the fleet prune budget in percent (DefaultBudget unless the owner sets one);
	// 0 holds every removal from a cluster.
	Budget int
}

// Hold is why an owner's pass may not remove anything now.
type Hold struct {
	// Reason is a condition reason (flotillav1.Reason...), Message says what is kept and what
	// ends the hold.
	Reason, Message string
	// Deliver reports whether the chosen clusters are still delivered to: only removals wait.
	Deliver bool
}

// Check returns the fleet-wide hold of a pass, or nil when it may go ahead.
func Check(p Pass) *Hold {
	delivered := slices.Sorted(slices.Values(p.Delivered))
	switch {
	case p.Released != "":
		if len(delivered) == 0 {
			return nil
		}
		token := Token(0, nil)
		if p.Confirmed == token {
			return nil
		}
		return &Hold{Reason: flotillav1.ReasonPruneBlocked, Message: fmt.Sprintf(
			"%s; the objects are kept on %d clusters (%s). %s, or confirm their removal from all of them with: %s",
			p.Released, len(delivered), strings.Join(delivered, ", "), p.Undo, p.command(token))}
	case p.Placement == nil:
		return &Hold{Reason: flotillav1.ReasonPlacementNotFound, Message: fmt.Sprintf(
			"Placement %s does not exist; create it, or fix %s (nothing is delivered or removed meanwhile)", p.PlacementName, p.PlacementRef)}
	case p.Placement.Status.ObservedGeneration != p.Placement.Generation:
		return &Hold{Reason: flotillav1.ReasonPlacementPending, Deliver: true, Message: fmt.Sprintf(
			"Placement %s has not scheduled its latest change yet; nothing is removed until it has", p.PlacementName)}
	case len(p.Chosen) == 0 && len(delivered) > 0:
		token := Token(p.Placement.Generation, nil)
		if p.Confirmed == token {
			return nil
		}
		return &Hold{Reason: flotillav1.ReasonPruneBlocked, Message: fmt.Sprintf(
			"Placement %s now chooses no cluster; the objects are kept on %d clusters (%s). Fix the Placement, or confirm their removal from all of them with: %s",
			p.PlacementName, len(delivered), strings.Join(delivered, ", "), p.command(token))}
	}
	return nil
}

// Leaving says why removing the owner from the clusters that left its Placement waits for
// confirmation, or "" when it may go ahead: they are more than the fleet prune budget's share
// of all the clusters the change touches (chosen and leaving). The per-cluster budget cannot
// see a Placement that shrinks from ten clusters to one: each removal empties a cluster.
func (p Pass) Leaving(leaving []string) string {
	budget := p.Budget
	touched := len(p.Chosen) + len(leaving)
	if len(leaving) == 0 || len(leaving)*100 <= budget*touched {
		return ""
	}
	sorted := slices.Sorted(slices.Values(leaving))
	var generation int64
	if p.Placement != nil {
		generation = p.Placement.Generation
	}
	token := Token(generation, sorted)
	if p.Confirmed == token || (len(p.Chosen) == 0 && p.Confirmed == Token(generation, nil)) {
		return "" // that removal, or, while the Placement chooses none, the one from every cluster
	}
	return fmt.Sprintf("the change would remove the objects from %d of the %d clusters (%s), more than the prune budget (%d%%) allows; nothing was removed. "+
		"Fix the Placement, or confirm with: %s",
		len(sorted), touched, strings.Join(sorted, ", "), budget, p.command(token))
}

// Left are the clusters the owner's records name that its Placement no longer chooses: those
// a pass removes it from.
func (p Pass) Left() []string {
	var out []string
	for _, c := range slices.Sorted(slices.Values(p.Delivered)) {
		if !slices.Contains(p.Chosen, c) {
			out = append(out, c)
		}
	}
	return out
}

// Planned is the fleet-wide hold a pass would apply, for `flotilla plan`: Check's, else
// Leaving's refusal to remove the owner from the clusters that left (Left), with Deliver set
// (only the removal waits); nil when nothing waits. A plan cannot see whether such a removal
// is under way already (it is then not asked about again), so it shows the confirmation the
// removal's first pass asks for.
func Planned(p Pass) *Hold {
	if h := Check(p); h != nil {
		return h
	}
	if msg := p.Leaving(p.Left()); msg != "" {
		return &Hold{Reason: flotillav1.ReasonPruneBlocked, Message: msg, Deliver: true}
	}
	return nil
}

// Token is the flotilla.dev/confirm-prune value that confirms removing an owner from clusters
// (sorted; nil: from every cluster it is on, however many are left as the removal goes on)
// after its Placement reached generation (0: the owner names none).
func Token(generation int64, clusters []string) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(generation, 10) + ":" + strings.Join(clusters, ",")))
	return "clusters-" + hex.EncodeToString(sum[:])[:10]
}

func (p Pass) command(token string) string {
	return decide.ConfirmCommand(p.Owner, decide.Strategy{ConfirmOn: p.ConfirmOn}, token)
}
