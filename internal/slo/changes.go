package slo

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// changeApplied is the service level of a hub change: from the first pass of an owner that
// wants something new on its chosen clusters to the first pass that finds all of it applied.
var changeApplied = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "flotilla_change_applied_duration_seconds",
	Help: "Seconds from an owner's first pass that wants a new revision or another set of clusters to the first pass that finds it applied on every chosen cluster, by owner kind.",
	// 0.25 s to about 17 minutes.
	Buckets: prometheus.ExponentialBuckets(0.25, 2, 13),
}, []string{"kind"})

func init() { ctrlmetrics.Registry.MustRegister(changeApplied) }

// Changes times owners' changes until they are applied everywhere. The zero value is ready.
type Changes struct {
	mu     sync.Mutex
	owners map[render.Owner]*change
}

// change is what an owner wanted at its latest pass and since when it waits for it.
type change struct {
	want  string
	since time.Time
	done  bool
}

// Want is what an owner wants of its chosen clusters, as Pass compares it: each chosen
// cluster with the revision it should have ("" when it keeps what it has).
func Want(chosen []string, revisionOf func(cluster string) string) string {
	parts := make([]string, 0, len(chosen))
	for _, c := range chosen {
		parts = append(parts, c+"="+revisionOf(c))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// Pass records one pass of owner, which wants want and found it applied everywhere (done) or
// not, at now. A change is timed from the first pass that wants it; a change that comes before
// the previous one was applied keeps the earlier start, for that is how long the owner has
// waited. The first pass that sees an owner (after the controller started) times nothing when
// it finds the owner done already.
func (c *Changes) Pass(owner render.Owner, want string, done bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners == nil {
		c.owners = map[render.Owner]*change{}
	}
	ch, seen := c.owners[owner]
	switch {
	case !seen:
		c.owners[owner] = &change{want: want, since: now, done: done}
		return
	case ch.want != want:
		if ch.done {
			ch.since = now
		}
		ch.want, ch.done = want, false
	}
	if done && !ch.done {
		ch.done = true
		changeApplied.WithLabelValues(owner.Kind).Observe(now.Sub(ch.since).Seconds())
	}
}

// Forget drops an owner that is being deleted: nothing of it is timed any more.
func (c *Changes) Forget(owner render.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owners, owner)
}
