package shard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// Options say who this replica is and how quickly the replicas notice each other.
type Options struct {
	// ID names this replica among its peers (its Pod name); unique per replica.
	ID string
	// Namespace holds the peer and fence Leases (the hub's own namespace).
	Namespace string
	// LeaseDuration is how long a replica's Lease and its fence Leases hold without renewal
	// (default 15s): it bounds how long a dead replica's clusters wait for another.
	LeaseDuration time.Duration
	// Probe is how often a replica looks at its peers and fences again (default 2s).
	Probe time.Duration
}

// Lease names.
const (
	fencePrefix = "flotilla-shard"
	peerPrefix  = "flotilla-replica"
)

// stopWait bounds how long a cluster's delivery may take to stop before its fence is given up.
const stopWait = 30 * time.Second

func (o Options) withDefaults() Options {
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.Probe <= 0 {
		o.Probe = 2 * time.Second
	}
	return o
}

// Stopper is an aware component that can say when what it runs for a cluster has stopped: the
// coordinator waits for it before another replica may take the cluster (Agents).
type Stopper interface {
	WaitStopped(ctx context.Context, cluster string)
}

// Coordinator is a multicluster-runtime coordinator (mcmanager.WithCoordinator) that starts each
// cluster's delivery on one replica: the one rendezvous hashing over the live replicas names
// (multicluster-runtime's sharder), once it holds the cluster's fence Lease. It is
// multicluster-runtime's sharded coordinator in what it decides, with what Flotilla needs
// besides: every start and stop happens in one loop, a cluster's delivery is stopped and waited
// for before its fence is given up (a handover never has two writers), a holder that cannot
// renew its fence stops delivering before the fence can expire for the others, and a replica
// decides nothing until it has seen its peers for a renewal period (replicas started together
// do not all take every cluster first).
type Coordinator struct {
	kube  client.Client
	opts  Options
	log   logr.Logger
	peers *peers
	hrw   sharder.Sharder
	poke  chan struct{}

	mu       sync.Mutex
	awares   []multicluster.Aware
	clusters map[string]*member
	// draining counts, by cluster, the deliveries stopped here that have not stopped yet
	// (stopDelivery): the cluster's fence stays held, and nothing starts there, until none is.
	draining map[string]int
	// stops are the stopDelivery waits under way (stopAll waits for them).
	stops sync.WaitGroup
	// stopWait bounds each of them (stopWait, shorter in tests).
	stopWait time.Duration
}

// member is one engaged cluster.
type member struct {
	ctx   context.Context // the engagement: ends when the inventory disengages the cluster
	cl    cluster.Cluster
	fence *fence
	// stop ends this replica's delivery to the cluster; nil while it delivers none. Only the
	// coordinator's loop starts and stops deliveries.
	stop context.CancelFunc
	// abandoned, set when the delivery stop ends did not stop within stopWait, refuses every
	// write of that delivery's clients from then on (fencedCluster), whatever fence this
	// replica holds later.
	abandoned *atomic.Bool
	// replaced are the members engagements with new credentials took the place of, before
	// the loop saw them: their deliveries are stopped (and the fence they share kept) by the
	// loop.
	replaced []*member
	gone     bool // disengaged: its delivery stops, its fence is released
}

// New returns the coordinator; kube reads and writes the Leases (an uncached client: the hub
// cache does not watch Leases).
func New(kube client.Client, opts Options, log logr.Logger) *Coordinator {
	opts = opts.withDefaults()
	return &Coordinator{kube: kube, opts: opts, log: log, peers: newPeers(kube, opts.Namespace, opts.ID, opts.LeaseDuration, log),
		hrw: sharder.NewHRW(), poke: make(chan struct{}, 1), clusters: map[string]*member{}, draining: map[string]int{}, stopWait: stopWait}
}

// AddAware registers a component to engage with the clusters this replica delivers to.
func (c *Coordinator) AddAware(a multicluster.Aware) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.awares = append(c.awares, a)
}

// Engage takes a cluster the inventory engaged; the loop decides whether this replica
// delivers to it. It never blocks.
func (c *Coordinator) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	m := &member{ctx: ctx, cl: cl}
	c.mu.Lock()
	if old := c.clusters[string(name)]; old != nil {
		// One fence per cluster, whichever engagement delivers; every member the loop has
		// not yet stopped is stopped before this one starts.
		m.replaced, m.fence = append(old.replaced, old), old.fence
		old.replaced = nil
	} else {
		m.fence = &fence{kube: c.kube, key: client.ObjectKey{Namespace: c.opts.Namespace, Name: fencePrefix + "-" + string(name)},
			self: c.opts.ID, duration: c.opts.LeaseDuration}
	}
	c.clusters[string(name)] = m
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		m.gone = true
		c.mu.Unlock()
		c.wake()
	})
	c.wake()
	return nil
}

func (c *Coordinator) wake() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// Runnable is the coordinator's loop, run on every replica, elected or not.
func (c *Coordinator) Runnable() manager.Runnable { return c }

// NeedLeaderElection says every replica runs the loop: it is what divides the clusters.
func (c *Coordinator) NeedLeaderElection() bool { return false }

// Start runs the peers' Leases and the loop until ctx ends; then it stops every delivery and
// gives its fences up, so that the others take the clusters over at once.
func (c *Coordinator) Start(ctx context.Context) error {
	peersDone := make(chan struct{})
	go func() {
		defer close(peersDone)
		_ = c.peers.Run(ctx)
	}()
	tick := time.NewTicker(c.opts.Probe)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			c.stopAll()
			<-peersDone
			return nil
		case <-tick.C:
		case <-c.poke:
		}
		c.decide(ctx)
	}
}

// decide starts and stops deliveries by what the peers and fences say now. It never waits for a
// delivery to stop: that happens in the background (stopDelivery), while the loop goes on
// renewing every fence this replica holds, the stopping clusters' included, so one cluster
// slow to stop never lets the others' fences lapse.
func (c *Coordinator) decide(ctx context.Context) {
	c.mu.Lock()
	names := make(map[string]*member, len(c.clusters))
	for name, m := range c.clusters {
		names[name] = m
	}
	c.mu.Unlock()
	ready := c.peers.ready(time.Now())
	alive, self := c.peers.Snapshot(), c.peers.Self()
	for name, m := range names {
		c.mu.Lock()
		if c.clusters[name] != m {
			// Replaced since the snapshot: the newer member took over the members this one
			// had still to stop, and the next pass stops them first.
			c.mu.Unlock()
			continue
		}
		gone, replaced := m.gone, m.replaced
		m.replaced = nil
		c.mu.Unlock()
		for _, old := range replaced {
			// New credentials: the old engagements' deliveries stop first; the fence, which
			// they share, stays this replica's meanwhile.
			c.stopDelivery(name, old)
		}
		if c.isDraining(name) {
			c.renewDue(ctx, m) // held until what delivered has stopped
			continue
		}
		if gone {
			if m.stop != nil {
				c.stopDelivery(name, m)
				c.renewDue(ctx, m)
				continue
			}
			c.release(ctx, m)
			c.mu.Lock()
			if c.clusters[name] == m {
				delete(c.clusters, name)
			}
			c.mu.Unlock()
			continue
		}
		should := ready && c.hrw.ShouldOwn(name, alive, self)
		switch {
		case m.stop != nil && !should:
			c.stopDelivery(name, m)
			c.renewDue(ctx, m)
		case m.stop != nil:
			c.renewDue(ctx, m)
			if !m.fence.held(time.Now()) {
				c.log.Info("Cannot renew the cluster's fence; stopping before another replica may take it", "cluster", name)
				c.stopDelivery(name, m)
			}
		case should:
			var got bool
			c.fenceCall(ctx, func(ctx context.Context) { got = m.fence.acquire(ctx, time.Now()) })
			if got {
				c.startDelivery(name, m)
			}
		default:
			c.release(ctx, m) // stopped here: the next holder need not wait for it to expire
		}
	}
}

// renewDue renews a fence this replica holds (or held, for a cluster whose delivery is
// stopping) once a third of its life has passed. Each renewal is stamped with its own time.
func (c *Coordinator) renewDue(ctx context.Context, m *member) {
	at := m.fence.renewed()
	if at.IsZero() || time.Since(at) < c.opts.LeaseDuration/3 {
		return
	}
	c.fenceCall(ctx, func(ctx context.Context) { m.fence.acquire(ctx, time.Now()) })
}

// fenceCall runs a Lease request within a third of the Lease's duration: a hub that does not
// answer must not keep a holder from noticing it can no longer count on its fence.
func (c *Coordinator) fenceCall(ctx context.Context, call func(context.Context)) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.LeaseDuration/3)
	defer cancel()
	call(ctx)
}

func (c *Coordinator) startDelivery(name string, m *member) {
	ctx, stop := context.WithCancel(m.ctx)
	m.stop, m.abandoned = stop, &atomic.Bool{}
	c.mu.Lock()
	awares := append([]multicluster.Aware(nil), c.awares...)
	c.mu.Unlock()
	c.log.Info("Delivering to the cluster from this replica", "cluster", name)
	fenced := fencedCluster{Cluster: m.cl, fence: m.fence, abandoned: m.abandoned}
	for _, a := range awares {
		if err := a.Engage(ctx, multicluster.ClusterName(name), fenced); err != nil {
			c.log.Error(err, "Cannot start delivering to the cluster", "cluster", name)
		}
	}
}

// stopDelivery ends this replica's delivery to the cluster; what delivered is waited for,
// within stopWait, in the background: the cluster is draining until then, and the loop is woken
// once it has stopped (to release the fence, or start it again).
func (c *Coordinator) stopDelivery(name string, m *member) {
	if m.stop == nil {
		return
	}
	m.stop()
	m.stop = nil
	abandoned := m.abandoned
	c.mu.Lock()
	c.draining[name]++
	awares := append([]multicluster.Aware(nil), c.awares...)
	c.mu.Unlock()
	c.stops.Add(1)
	go func() {
		defer c.stops.Done()
		ctx, cancel := context.WithTimeout(context.Background(), c.stopWait)
		defer cancel()
		for _, a := range awares {
			if s, ok := a.(Stopper); ok {
				s.WaitStopped(ctx, name)
			}
		}
		if ctx.Err() != nil {
			// Its fence is given up now; a later delivery here may hold it again, and this
			// one, still running past its context, must not write beside that one.
			abandoned.Store(true)
			c.log.Info("The cluster's delivery did not stop in time; its writes are refused from now on", "cluster", name, "waited", c.stopWait)
		} else {
			c.log.Info("No longer delivering to the cluster from this replica", "cluster", name)
		}
		c.mu.Lock()
		if c.draining[name]--; c.draining[name] <= 0 {
			delete(c.draining, name)
		}
		c.mu.Unlock()
		c.wake()
	}()
}

// isDraining reports whether a delivery stopped on the cluster has not stopped yet.
func (c *Coordinator) isDraining(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining[name] > 0
}

func (c *Coordinator) release(ctx context.Context, m *member) {
	if m.fence != nil && !m.fence.renewed().IsZero() {
		c.fenceCall(context.WithoutCancel(ctx), m.fence.release)
	}
}

// stopAll stops every delivery, and releases each cluster's fence as soon as what delivered
// there has stopped (each within stopWait), so that another replica takes that cluster over at
// once rather than wait for the slowest cluster here; meanwhile the fences still draining are
// renewed, as the loop would (the replica stops).
func (c *Coordinator) stopAll() {
	c.mu.Lock()
	members := make(map[string]*member, len(c.clusters))
	var replaced map[string][]*member
	for name, m := range c.clusters {
		members[name] = m
		if len(m.replaced) > 0 {
			if replaced == nil {
				replaced = map[string][]*member{}
			}
			replaced[name], m.replaced = m.replaced, nil
		}
	}
	c.mu.Unlock()
	for name, m := range members {
		for _, old := range replaced[name] {
			c.stopDelivery(name, old)
		}
		c.stopDelivery(name, m)
	}
	tick := time.NewTicker(c.opts.Probe)
	defer tick.Stop()
	ctx := context.Background() // the replica's own context has ended
	for {
		for name, m := range members {
			if c.isDraining(name) {
				c.renewDue(ctx, m)
				continue
			}
			c.release(ctx, m) // the replaced members share it
			delete(members, name)
		}
		if len(members) == 0 {
			break
		}
		select {
		case <-c.poke: // a stop ended
		case <-tick.C:
		}
	}
	c.stops.Wait()
}
