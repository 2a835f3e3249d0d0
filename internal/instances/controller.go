package instances

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Deliverer is what the controller asks of internal/deliver, the only writer to spokes.
type Deliverer interface {
	Submit(deliver.Job)
	Result(owner render.Owner, cluster string) (deliver.Result, bool)
	Recheck(owner render.Owner, cluster string)
	Forget(owner render.Owner, cluster string)
}

var _ Deliverer = (*deliver.Deliverer)(nil)

// Options tunes the controller.
type Options struct {
	// Workers is how many instances of one cluster are reconciled at once (default 4): each
	// engaged cluster has its own queue and workers (queue.go). A reconcile reads caches,
	// evaluates kro's CEL under its limits and submits a job; it never waits on a spoke.
	Workers int
	// ReconcileTimeout bounds one reconcile (default 30s): the cache reads inside it wait for
	// a kind's first sync at most, and kro's CEL is interrupted when it passes (the instance
	// shows ERROR, saying so).
	ReconcileTimeout time.Duration
	// Owners, if set, is told every instance: their children are what spoke caches keep whole.
	Owners *owners.Registry
}

// Controller watches the instances of the fleet APIs every engaged spoke serves and expands
// each, in its own cluster, through the deliverer. It is a multicluster-runtime runnable: add
// it to the manager (mgr.Add), which engages every spoke into it, current and future.
type Controller struct {
	graphs    Graphs
	deliverer Deliverer
	opts      Options
	log       logr.Logger

	mu     sync.Mutex
	spokes map[string]*spoke
	// ctx is Start's, once started; stopped is set when it ends. workers counts the workers
	// of every spoke's queue.
	ctx     context.Context
	stopped bool
	workers sync.WaitGroup
	// kinds remembers the kind of every owner with a job, so that a deliverer result, which
	// names the owner only by "Kind.group", finds its instance.
	kinds map[render.Owner]schema.GroupVersionKind
	// shown is the status last submitted for each instance (by uid): what the instance shows,
	// or soon will (the deliverer is the only writer of its status), so that a pass made
	// before the informer has caught up computes its conditions' transitions from it, not
	// from an older status, and does not write them again with new times.
	shown map[render.Owner]shownStatus
	// submitted is when each instance's latest job was submitted: for a while after, the spoke
	// cache may not show the children it wrote yet (recentlySubmitted).
	submitted map[render.Owner]time.Time
	// countSubscribers are told when the counts of a kind on a cluster may have changed.
	countSubscribers []func(cluster string, kind schema.GroupVersionKind)
}

// shownStatus is a status submitted for an instance.
type shownStatus struct {
	uid    types.UID
	status any
}

var _ mcmanager.Runnable = (*Controller)(nil)

// New returns a controller expanding the instances of what graphs serves, through d. Route the
// deliverer's notifications of owners on spokes (render.Owner.OnSpoke) to Notify.
func New(graphs Graphs, d Deliverer, opts Options) *Controller {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.ReconcileTimeout <= 0 {
		opts.ReconcileTimeout = 30 * time.Second
	}
	c := &Controller{
		graphs: graphs, deliverer: d, opts: opts,
		log:    ctrllog.Log.WithName("instances"),
		spokes: map[string]*spoke{},
		kinds:  map[render.Owner]schema.GroupVersionKind{},
		shown:  map[render.Owner]shownStatus{},
	}
	graphs.Subscribe(c.sync)
	return c
}

// Start implements manager.Runnable: it reconciles instances until ctx ends, each engaged
// spoke's from its own queue. Spokes engaged before it starts are watched already; their
// events wait in their queues.
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	for _, s := range c.spokes {
		c.startWorkersLocked(s)
	}
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.workers.Wait()
	return nil
}

// NeedLeaderElection: only the elected replica submits deliveries. Spokes are engaged into
// every replica, so a new leader's informers are warm.
func (c *Controller) NeedLeaderElection() bool { return true }

// Notify is told by the deliverer that an owner's result changed: its instance is looked at
// again (readiness is reported only at the delivered revision, failures are shown on it).
func (c *Controller) Notify(owner render.Owner) {
	c.mu.Lock()
	kind, ok := c.kinds[owner]
	c.mu.Unlock()
	if s := c.spoke(owner.Cluster); ok && s != nil {
		s.enqueue(kind, owner.Namespace, owner.Name)
	}
}

func (c *Controller) processNext(ctx context.Context, s *spoke) bool {
	req, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(req)
	rctx, cancel := context.WithTimeoutCause(ctx, c.opts.ReconcileTimeout,
		fmt.Errorf("the instance's reconcile deadline of %s passed", c.opts.ReconcileTimeout))
	err := c.reconcile(rctx, req)
	cancel()
	switch {
	case ctx.Err() != nil:
	case kro.StoppedByCost(err):
		// The same input costs the same: a change to the instance, its graph, its children or
		// its references queues it; a retry with backoff would only spend the hub's CPU (a spoke
		// user decides how much, with the instance's spec). A late look stands in for inputs
		// whose changes queue nothing.
		c.log.V(1).Info("Instance too costly to evaluate; looked at again when it or what it reads changes",
			"instance", req.String(), "error", err.Error())
		s.queue.Forget(req)
		s.lookAgainLater(req)
		return true
	case err != nil:
		c.log.V(1).Info("Reconcile failed; retrying", "instance", req.String(), "error", err.Error())
		s.queue.AddRateLimited(req)
		return true
	}
	s.queue.Forget(req)
	s.noLookLater(req.Request)
	return true
}

// submit hands a job for an instance to the deliverer, remembering the owner's kind for its
// results and the status it is to show.
func (c *Controller) submit(req request, instance *unstructured.Unstructured, job deliver.Job) {
	c.mu.Lock()
	c.kinds[job.Owner] = req.Request.Kind
	for _, target := range job.Status {
		if target.GetName() == instance.GetName() && target.GetNamespace() == instance.GetNamespace() && target.GetKind() == instance.GetKind() {
			c.shown[job.Owner] = shownStatus{uid: instance.GetUID(), status: target.Object["status"]}
		}
	}
	if c.submitted == nil {
		c.submitted = map[render.Owner]time.Time{}
	}
	c.submitted[job.Owner] = time.Now()
	c.mu.Unlock()
	c.deliverer.Submit(job)
}

// cacheLag is how long after a delivery the spoke cache may not show what it wrote.
const cacheLag = 10 * time.Second

// recentlySubmitted reports whether owner's latest job went to the deliverer within cacheLag.
func (c *Controller) recentlySubmitted(owner render.Owner) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.submitted[owner]
	return ok && time.Since(at) < cacheLag
}

// withShownStatus is the instance as it shows, or is about to show, the status last submitted
// for it: the informer may not have caught up with the deliverer's write yet.
func (c *Controller) withShownStatus(owner render.Owner, instance *unstructured.Unstructured) *unstructured.Unstructured {
	c.mu.Lock()
	shown, ok := c.shown[owner]
	c.mu.Unlock()
	if !ok || shown.uid != instance.GetUID() {
		return instance
	}
	view := instance.DeepCopy()
	view.Object["status"] = runtime.DeepCopyJSONValue(shown.status)
	return view
}

// forget drops an instance that is gone: its job stops, and nothing more is deleted.
func (c *Controller) forget(owner render.Owner) {
	c.mu.Lock()
	_, had := c.kinds[owner]
	delete(c.kinds, owner)
	delete(c.shown, owner)
	delete(c.submitted, owner)
	c.mu.Unlock()
	if had {
		c.deliverer.Forget(owner, owner.Cluster)
	}
}
