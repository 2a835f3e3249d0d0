package slo

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// histogram returns the count and sum of changeApplied for kind.
func histogram(t *testing.T, kind string) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := changeApplied.WithLabelValues(kind).(interface{ Write(*dto.Metric) error }).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func TestChangesTimeEachChangeOnce(t *testing.T) {
	const kind = "TestOwner"
	owner := render.Owner{Kind: kind, Namespace: "team-a", Name: "web"}
	var c Changes
	t0 := time.Unix(1000, 0)
	want := func(rev string) string {
		return Want([]string{"b", "a"}, func(string) string { return rev })
	}
	if Want([]string{"b", "a"}, func(c string) string { return c }) != "a=a,b=b" {
		t.Fatalf("Want is not sorted: %q", Want([]string{"b", "a"}, func(c string) string { return c }))
	}

	// First sight of an owner already applied (a restart of the controller): nothing timed.
	c.Pass(owner, want("r1"), true, t0)
	if n, _ := histogram(t, kind); n != 0 {
		t.Fatalf("first sight timed %d changes", n)
	}
	// A new revision, applied 3 s later; passes in between and after change nothing.
	c.Pass(owner, want("r2"), false, t0.Add(10*time.Second))
	c.Pass(owner, want("r2"), false, t0.Add(11*time.Second))
	c.Pass(owner, want("r2"), true, t0.Add(13*time.Second))
	c.Pass(owner, want("r2"), true, t0.Add(20*time.Second))
	if n, sum := histogram(t, kind); n != 1 || sum != 3 {
		t.Fatalf("after one change: %d observations summing %v, want 1 of 3 s", n, sum)
	}
	// A change superseded before it was applied: timed from the first, once.
	c.Pass(owner, want("r3"), false, t0.Add(30*time.Second))
	c.Pass(owner, want("r4"), false, t0.Add(32*time.Second))
	c.Pass(owner, want("r4"), true, t0.Add(35*time.Second))
	if n, sum := histogram(t, kind); n != 2 || sum != 8 {
		t.Fatalf("after a superseded change: %d observations summing %v, want 2 summing 8 s", n, sum)
	}
	// A forgotten owner seen again is a first sight.
	c.Forget(owner)
	c.Pass(owner, want("r5"), true, t0.Add(40*time.Second))
	if n, _ := histogram(t, kind); n != 2 {
		t.Fatalf("a forgotten owner was timed: %d observations", n)
	}
	if got := testutil.CollectAndCount(changeApplied, "flotilla_change_applied_duration_seconds"); got < 1 {
		t.Fatalf("series: %d", got)
	}
}
