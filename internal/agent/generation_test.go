package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
)

// TestBookNeverGoesBackToOlderWork: once the spoke runs generation 5 of a record, an answer
// with generation 4 of the same record (a hub replica whose cache lags) submits nothing and
// says why, while generation 6, and generation 1 of a record made again (another UID), are
// taken.
func TestBookNeverGoesBackToOlderWork(t *testing.T) {
	b := newBook("edge", time.Minute)
	now := time.Unix(1000, 0)
	at := func(uid string, gen int64, digest string) clusterwork.Work {
		i := item("a")
		i.RecordUID, i.Generation, i.Digest = uid, gen, digest
		return clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{i}}
	}
	if submit, _, _ := b.answer(at("uid-1", 5, "d5"), now); len(submit) != 1 {
		t.Fatalf("generation 5: %d submitted", len(submit))
	}
	submit, remove, invalid := b.answer(at("uid-1", 4, "d4"), now)
	if len(submit) != 0 || len(remove) != 0 {
		t.Fatalf("an older generation: %d submitted, %d removed", len(submit), len(remove))
	}
	if why := invalid["team/propagation.a.edge"]; !strings.Contains(why, "older than generation 5") {
		t.Errorf("an older generation says %q", why)
	}
	if h := b.owners[ownerOf(item("a"))]; h.job.Revision != "d5" || !h.missing.IsZero() {
		t.Errorf("an older generation changed what runs: %+v", h)
	}
	if submit, _, _ := b.answer(at("uid-1", 6, "d6"), now); len(submit) != 1 || submit[0].Revision != "d6" {
		t.Fatalf("generation 6: %+v", submit)
	}
	if submit, _, _ := b.answer(at("uid-2", 1, "e1"), now); len(submit) != 1 || submit[0].Revision != "e1" {
		t.Fatalf("a record made again: %+v", submit)
	}
}

// TestBookPassesThePruneConfirmation: the owner's confirmation the hub serves lifts the budget
// of the agent's job as it does the hub's.
func TestBookPassesThePruneConfirmation(t *testing.T) {
	b := newBook("edge", time.Minute)
	i := item("a")
	i.PruneConfirmed = i.Revision
	submit, _, _ := b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{i}}, time.Unix(1000, 0))
	if len(submit) != 1 || submit[0].Strategy.PruneConfirmed != i.Revision || !submit[0].Strategy.Confirmed(i.Digest) {
		t.Fatalf("the job does not carry the confirmation: %+v", submit)
	}
}

// TestRestartedBookNeverGoesBack: the generation the spoke runs is remembered, so a restarted
// agent refuses an older one too.
func TestRestartedBookNeverGoesBack(t *testing.T) {
	b := newBook("edge", time.Minute)
	i := item("a")
	i.RecordUID, i.Generation = "uid-1", 5
	b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{i}}, time.Unix(1000, 0))
	restarted := newBook("edge", time.Minute)
	restarted.recall(b.remember())
	i.Generation = 4
	if submit, _, invalid := restarted.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{i}}, time.Unix(1001, 0)); len(submit) != 0 || len(invalid) != 1 {
		t.Fatalf("a restarted agent took an older generation: %d submitted, %v", len(submit), invalid)
	}
}

// TestTimeTheHubDidNotAnswerDoesNotCount: an owner left out just before the hub went away is
// not removed at the first answer after an outage longer than the grace: the grace starts
// again when the hub answers.
func TestTimeTheHubDidNotAnswerDoesNotCount(t *testing.T) {
	b := newBook("edge", time.Minute)
	t0 := time.Unix(1000, 0)
	b.answer(clusterwork.Work{Cluster: "edge", Items: []clusterwork.Item{item("a")}}, t0)
	b.answer(clusterwork.Work{Cluster: "edge"}, t0.Add(time.Second)) // a left out
	back := t0.Add(time.Hour)                                        // the hub was away meanwhile
	b.resumed(back)
	if remove := b.unchanged(back); len(remove) != 0 {
		t.Fatalf("removed at the first answer after the outage: %v", remove)
	}
	if remove := b.unchanged(back.Add(time.Minute)); len(remove) != 1 {
		t.Fatalf("not removed a grace after the hub answered again: %v", remove)
	}
}
