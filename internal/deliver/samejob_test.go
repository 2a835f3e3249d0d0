package deliver

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
)

// A job that asks for the same objects under another strategy is not the same job: a delivery
// that completed is looked at again (an instance confined to its namespace again is refused,
// one allowed to adopt what kro made adopts it).
func TestSameJobComparesTheWholeStrategy(t *testing.T) {
	base := Job{Revision: "r1", Prune: true}
	for name, change := range map[string]func(*Job){
		"cluster-wide":   func(j *Job) { j.ClusterWide = true },
		"adoption mark":  func(j *Job) { j.AdoptMarked = decide.Mark{Key: "k", Value: "v"} },
		"prune budget":   func(j *Job) { j.PruneBudget = 10 },
		"prune":          func(j *Job) { j.Prune = false },
		"prune order":    func(j *Job) { j.PruneOrder = "wave" },
		"conflict adopt": func(j *Job) { j.Conflict = "Adopt" },
	} {
		other := base
		change(&other)
		if sameJob(base, other) {
			t.Errorf("%s: a job with another %s is the same job", name, name)
		}
	}
	if !sameJob(base, base) {
		t.Error("a job is not the same as itself")
	}
}

// Confirmations survive a new prune confirmation token (every revision brings one) but not a
// change of what decides objects.
func TestConfirmedUnder(t *testing.T) {
	s := decide.Strategy{Conflict: flotillav1.ConflictAdopt, PruneBudget: 50, PruneConfirmed: "r1", ConfirmToken: "r1"}
	next := s
	next.PruneConfirmed, next.ConfirmToken = "r2", "r2"
	if confirmedUnder(s) != confirmedUnder(next) {
		t.Errorf("a new confirmation token voids confirmations: %q vs %q", confirmedUnder(s), confirmedUnder(next))
	}
	next.ClusterWide = true
	if confirmedUnder(s) == confirmedUnder(next) {
		t.Error("a strategy that decides otherwise keeps confirmations")
	}
}
