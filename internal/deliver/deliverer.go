package deliver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/logkeys"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// permanentRetry is how long a delivery the spoke refused for good (invalid, too large,
// forbidden, conflicting) waits before it is tried again, unless the hub object changes first.
const permanentRetry = 5 * time.Minute

// Options tunes delivery.
type Options struct {
	// WorkersPerCluster is how many deliveries run at once on one cluster (default 4).
	WorkersPerCluster int
	// JobTimeout bounds one delivery (default 2m).
	JobTimeout time.Duration
	// VerifyInterval is how often every delivery to a cluster is confirmed again against the
	// spoke cache, as a backstop to the spoke watches (default 10m, jittered by up to 10%;
	// negative turns it off). Only what really differs is written.
	VerifyInterval time.Duration
	// OnDrift, when set, is told of each drift a delivery finds anew, corrected or left.
	OnDrift func(owner render.Owner, cluster string, d Drift)
	// RetryBase is the wait before a failed delivery's first retry, doubled at each failure
	// up to 30 s or RetryBase, the longer (default 200ms). A spoke that did not answer is tried again as soon as it
	// answers whatever the backoff (answer.go).
	RetryBase time.Duration
	// CacheSyncTimeout is how long a read waits for its kind's spoke cache to fill before it
	// goes to the API server (default 10s; spokeread.go).
	CacheSyncTimeout time.Duration
	// Grant, when set, names the ClusterRole a spoke binds Flotilla's credentials to (the
	// inventory knows it from `flotilla join`), for messages about refused requests.
	Grant func(cluster string) string
}

// Deliverer runs deliveries, one queue per cluster. It is a multicluster-runtime runnable:
// the manager engages every spoke the inventory engages into it (engage.go).
type Deliverer struct {
	ctx    context.Context
	notify func(render.Owner)
	opts   Options
	log    logr.Logger

	mu      sync.Mutex
	workers map[string]*clusterWorker
	engaged map[string]*engagement
}

// New returns a Deliverer whose workers run until ctx ends. notify is called with an owner
// whenever one of its results changes. Add it to the multicluster manager, which engages the
// spokes into it; a cluster not engaged is delivered to as Disconnected.
func New(ctx context.Context, notify func(render.Owner), opts Options) *Deliverer {
	if opts.WorkersPerCluster <= 0 {
		opts.WorkersPerCluster = 4
	}
	if opts.JobTimeout <= 0 {
		opts.JobTimeout = 2 * time.Minute
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 200 * time.Millisecond
	}
	if opts.CacheSyncTimeout <= 0 {
		opts.CacheSyncTimeout = defaultCacheSyncTimeout
	}
	if opts.VerifyInterval == 0 {
		opts.VerifyInterval = 10 * time.Minute
	}
	d := &Deliverer{ctx: ctx, notify: notify, opts: opts,
		log: ctrllog.Log.WithName("deliver"), workers: map[string]*clusterWorker{}, engaged: map[string]*engagement{}}
	d.track()
	return d
}

// Submit makes job the latest desired state of its owner on its cluster and queues it. A job
// equal to the one already delivered completely is not queued again.
func (d *Deliverer) Submit(job Job) {
	if job.Owner.OnSpoke() && job.Owner.Cluster != job.Cluster {
		d.refuse(job, fmt.Sprintf("%s lives on cluster %s and delivers there only", job.Owner, job.Owner.Cluster))
		return
	}
	w := d.worker(job.Cluster)
	w.mu.Lock()
	for w.retired {
		// Retired between lookup and lock: a fresh worker takes the job.
		w.mu.Unlock()
		w = d.worker(job.Cluster)
		w.mu.Lock()
	}
	if prev, ok := w.results[job.Owner]; ok && prev.Complete && prev.Revision == job.Revision && sameJob(w.jobs[job.Owner], job) {
		w.mu.Unlock()
		return
	}
	w.jobs[job.Owner] = job.withIdentities()
	w.mu.Unlock()
	w.queue.Add(job.Owner)
}

// refuse records a job that is never to be delivered as failed for good, without queueing it,
// and tells its owner.
func (d *Deliverer) refuse(job Job, why string) {
	w := d.worker(job.Cluster)
	res := Result{Revision: job.Revision, Failed: len(job.Objects), Permanent: true, Message: why}
	w.mu.Lock()
	w.jobs[job.Owner] = job.withIdentities()
	changed := !reflect.DeepEqual(w.results[job.Owner], res)
	w.results[job.Owner] = res
	w.mu.Unlock()
	if changed {
		d.notify(job.Owner)
	}
}

// sameJob compares what a job asks for, apart from its objects (covered by the revision).
func sameJob(a, b Job) bool {
	return a.Prune == b.Prune && a.Strategy == b.Strategy && reflect.DeepEqual(a.PruneKinds, b.PruneKinds) &&
		reflect.DeepEqual(a.Ignore, b.Ignore) && reflect.DeepEqual(a.Status, b.Status) &&
		reflect.DeepEqual(a.OwnerMeta, b.OwnerMeta) && a.PruneOrder == b.PruneOrder
}

// Retry queues at once every delivery to a cluster, for example when the cluster has just
// become reachable again: unfinished ones need not wait out their backoff, finished ones are
// confirmed again (reading the spoke cache; only what differs is written).
func (d *Deliverer) Retry(clusterName string) {
	w, ok := d.existingWorker(clusterName)
	if !ok {
		return
	}
	// The cluster was away: anything may have happened there, so confirm everything again.
	w.seen.ForgetConfirmed()
	w.mu.Lock()
	var owners []pairKey
	for owner := range w.jobs {
		owners = append(owners, owner)
	}
	w.mu.Unlock()
	for _, owner := range owners {
		w.queue.Add(owner)
	}
}

// Recheck delivers an owner's job to a cluster again as if nothing of it had been confirmed
// there: for an owner that learns from outside the deliverer that what it keeps may have
// changed (an owner on a spoke whose own object lost the metadata the job keeps on it, which
// no spoke watch of the deliverer sees). Only what differs is written.
func (d *Deliverer) Recheck(owner render.Owner, clusterName string) {
	w, ok := d.existingWorker(clusterName)
	if !ok {
		return
	}
	w.mu.Lock()
	_, has := w.jobs[owner]
	w.mu.Unlock()
	if has {
		w.seen.Confirm(owner, nil)
		w.queue.Add(owner)
	}
}

// Result returns the latest result of owner on cluster.
func (d *Deliverer) Result(owner render.Owner, clusterName string) (Result, bool) {
	w, ok := d.existingWorker(clusterName)
	if !ok {
		return Result{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.results[owner]
	return r, ok
}

// Forget drops what is known of owner on cluster (after its objects are gone from there).
func (d *Deliverer) Forget(owner render.Owner, clusterName string) {
	w, ok := d.existingWorker(clusterName)
	if !ok {
		return
	}
	w.mu.Lock()
	delete(w.jobs, owner)
	delete(w.results, owner)
	idle := len(w.jobs) == 0
	w.mu.Unlock()
	w.seen.Forget(owner)
	w.drifts.forget(owner)
	w.queue.Forget(owner)
	if idle {
		d.retire(w)
	}
}

// ForgetEverywhere drops owner on every cluster: its jobs stop (no more applies, drift
// corrections or periodic confirmations) and nothing is deleted. It is for an owner that is
// gone from the hub without its cleanup having run (its finalizer removed by hand, a restore
// of the hub): what it delivered stays on the spokes, no longer enforced.
func (d *Deliverer) ForgetEverywhere(owner render.Owner) {
	d.mu.Lock()
	names := make([]string, 0, len(d.workers))
	for name := range d.workers {
		names = append(names, name)
	}
	d.mu.Unlock()
	for _, name := range names {
		d.Forget(owner, name)
	}
}

// retire stops a worker left without jobs (its cluster left every placement, or was removed),
// so clusters that come and go do not leave goroutines, queues, spoke event handlers and
// metric series behind. Its delivery in flight, if any, is cancelled, and its spoke event
// handlers are removed with its context (watch.go). The next Submit to the cluster starts a
// new one.
func (d *Deliverer) retire(w *clusterWorker) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w.mu.Lock()
	if len(w.jobs) > 0 || d.workers[w.name] != w {
		w.mu.Unlock()
		return
	}
	w.retired = true
	w.mu.Unlock()
	delete(d.workers, w.name)
	w.stop()
	go d.release(w)
}

// release drops a retired worker's metric series once its goroutines are done (none of them
// can record anything after that), unless a new worker delivers to the cluster by then: the
// series are the cluster's, and go on with it.
func (d *Deliverer) release(w *clusterWorker) {
	w.running.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.workers[w.name]; !ok {
		forgetMetrics(w.name)
	}
}

// existingWorker returns the worker of a cluster, if one was started.
func (d *Deliverer) existingWorker(name string) (*clusterWorker, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w, ok := d.workers[name]
	return w, ok
}

func (d *Deliverer) worker(name string) *clusterWorker {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w, ok := d.workers[name]; ok {
		return w
	}
	ctx, stop := context.WithCancel(d.ctx)
	w := &clusterWorker{
		name:    name,
		d:       d,
		ctx:     ctx,
		stop:    stop,
		jobs:    map[pairKey]Job{},
		results: map[pairKey]Result{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[pairKey](d.opts.RetryBase, max(d.opts.RetryBase, 30*time.Second)),
			workqueue.TypedRateLimitingQueueConfig[pairKey]{Name: "deliver-" + name}),
	}
	d.workers[name] = w
	// Counters of the cluster start at 0, so that rate() and alerts see their first increase.
	driftEvents.WithLabelValues(name)
	verifications.WithLabelValues(name)
	w.goRun(d.opts.WorkersPerCluster, w.run)
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	if d.opts.VerifyInterval > 0 {
		w.goRun(1, func() { w.verifyPeriodically(d.opts.VerifyInterval) })
	}
	return w
}

// goRun starts n goroutines running fn, counted in w.running.
func (w *clusterWorker) goRun(n int, fn func()) {
	w.running.Add(n)
	for range n {
		go func() {
			defer w.running.Done()
			fn()
		}()
	}
}

// clusterWorker delivers to one cluster.
type clusterWorker struct {
	name  string
	d     *Deliverer
	queue workqueue.TypedRateLimitingInterface[pairKey]
	ctx   context.Context    // ends when the Deliverer stops or the worker retires; its spoke event handlers go with it
	stop  context.CancelFunc // retires the worker
	// running counts the goroutines that deliver and verify (and record metrics).
	running sync.WaitGroup

	mu       sync.Mutex
	jobs     map[pairKey]Job
	results  map[pairKey]Result
	watches  *watchScope                 // the spoke event handlers of this worker on the engaged instance
	bypass   bypassed                    // kinds read without the cache
	appliers applierCache                // writes to the current cluster instance
	retired  bool                        // stopped for want of jobs; Submit uses a new worker
	claims   map[string]map[pairKey]bool // owners waiting for an object another owner holds, by render.Key
	seen     observe.Cluster             // what is known of the cluster's objects between deliveries
	drifts   driftClock                  // when watched drifts began, until corrected
	awaiting bool                        // a wait for the spoke to answer again runs (answer.go)
}

// verifyPeriodically confirms every delivery again now and then, in case a watch missed
// something: it reads the spoke cache and writes only what differs.
func (w *clusterWorker) verifyPeriodically(interval time.Duration) {
	for {
		jitter := time.Duration(rand.Int64N(int64(interval/10) + 1))
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(interval + jitter):
		}
		verifications.WithLabelValues(w.name).Inc()
		w.d.Retry(w.name)
	}
}

func (w *clusterWorker) run() {
	for {
		owner, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		w.process(owner)
		w.queue.Done(owner)
	}
}

func (w *clusterWorker) process(owner pairKey) {
	w.mu.Lock()
	job, ok := w.jobs[owner]
	w.mu.Unlock()
	if !ok {
		return
	}
	// The worker's context, not the Deliverer's: retiring the worker (its owners forgot the
	// cluster) cancels the delivery in flight, which no one wants any more.
	ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.JobTimeout)
	defer cancel()
	log := w.d.log.WithValues(logkeys.Cluster, w.name, logkeys.Owner, owner.String())
	start := time.Now()
	result := w.deliver(ctrllog.IntoContext(ctx, log), job)
	observeDelivery(w.name, result, start)
	if result.Complete && result.Drifted == 0 && result.Fighting == 0 {
		w.drifts.forget(owner) // nothing is drifted any more: a drift that went away by itself is not timed
	}
	w.mu.Lock()
	current, stillWanted := w.jobs[owner]
	prev := w.results[owner]
	if stillWanted && current.Revision == job.Revision {
		w.results[owner] = result
	}
	w.mu.Unlock()
	switch {
	case w.ctx.Err() != nil: // stopped or retired: nothing to queue again
	case !result.Complete && result.Permanent:
		w.queue.Forget(owner)
		w.queue.AddAfter(owner, permanentRetry)
	case !result.Complete:
		w.queue.AddRateLimited(owner)
		if result.Unanswered {
			w.awaitAnswer() // and at once when the spoke answers again
		}
	case result.Ready < len(job.Objects):
		w.queue.Forget(owner)
		w.queue.AddAfter(owner, readinessRecheck)
	default:
		w.queue.Forget(owner)
	}
	if !reflect.DeepEqual(prev, result) {
		w.d.notify(owner)
	}
}
