package ledger

import (
	"context"

	"golang.org/x/sync/errgroup"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/coalesce"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A record's status is written aside, by the ledger's own workers, not in the reconcile of its
// owner: it names every object delivered to the cluster, so computing and applying it takes
// tens of milliseconds for a thousand objects, and a reconcile that wrote ten of them would
// hold up the owner's next hub edit by a second or more. Reports of one record coalesce: the
// latest wins, and a write in flight is followed by one of the latest.

// reportWorkers is how many records are written at once.
const reportWorkers = 4

// report is a delivery result to record: the record's status before, the result, and the
// objects the delivery wants on the cluster (see StatusOf).
type report struct {
	prev flotillav1.DeliveryStatus
	res  deliver.Result
	objs []*unstructured.Unstructured
}

// Report queues the latest result of owner's delivery to cluster for its record, and returns
// at once. prev is the record's status as the caller read it. The write happens only if the
// status changed; a record that does not exist (nothing was prepared) is left alone.
func (l *Ledger) Report(owner render.Owner, cluster string, prev flotillav1.DeliveryStatus, res deliver.Result, objs []*unstructured.Unstructured) {
	p := pair{owner, cluster}
	if res.Complete {
		l.mu.Lock()
		if l.completed == nil {
			l.completed = map[pair]string{}
		}
		l.completed[p] = res.Revision
		l.mu.Unlock()
	}
	l.reportQueue().Add(p, report{prev: prev, res: res, objs: objs})
}

// statusOf is the status a report writes. Its revision delivered completely is the latest one
// reported, which may be newer than what the caller read: a result complete at one revision
// can be replaced, before it is written, by one still delivering the next, and the record must
// not fall back to the revision before both.
func (l *Ledger) statusOf(p pair, rep report) flotillav1.DeliveryStatus {
	prev := rep.prev
	l.mu.Lock()
	if rev, ok := l.completed[p]; ok {
		prev.Revision = rev
	}
	l.mu.Unlock()
	return StatusOf(prev, rep.res, rep.objs)
}

// Start writes reported results and what each cluster must run until ctx ends (a
// manager.Runnable: only the elected hub controller writes records).
func (l *Ledger) Start(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return l.reportQueue().Start(ctx) })
	g.Go(func() error { return l.workQueue().Start(ctx) })
	return g.Wait()
}

func (l *Ledger) reportQueue() *coalesce.Queue[pair, report] {
	l.once.Do(func() {
		l.reports = &coalesce.Queue[pair, report]{Name: "ledger-reports", Workers: reportWorkers,
			Handle: func(ctx context.Context, p pair, rep report) error {
				return l.writeStatus(ctx, p.owner, p.cluster, l.statusOf(p, rep))
			}}
	})
	return l.reports
}

// WriteReported writes into owner's record on cluster the status a pull cluster's agent
// reported (package clusterwork computes it with StatusOf from the agent's result and the
// record's own work), now, and returns the write's error. It is the ledger's write like any
// other: the record must exist (nothing is created), and a status the record already shows is
// not written again. The hub's own deliveries never report for a pull cluster (package
// fanout), so the agent's status is not overwritten.
func (l *Ledger) WriteReported(ctx context.Context, owner render.Owner, cluster string, status flotillav1.DeliveryStatus) error {
	return l.writeStatus(ctx, owner, cluster, status)
}
