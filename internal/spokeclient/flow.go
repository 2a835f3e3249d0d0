package spokeclient

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

// Flow is the flow control of one spoke, shared by every client built for it (the cluster's
// cache and client, the deliverer's applier, the health probe): one window, one set of slots.
type Flow struct {
	cluster string
	clock   clock.PassiveClock
	metrics flowMetrics

	mu       sync.Mutex
	window   *window
	inFlight int
	waiters  []chan struct{} // first come, first served
	// forgotten: the cluster's series are dropped; requests still finishing must not bring
	// one back.
	forgotten bool
}

// New returns the flow control of a spoke, with DefaultLimits.
func New(cluster string) *Flow {
	return newFlow(cluster, DefaultLimits, clock.RealClock{})
}

func newFlow(cluster string, l Limits, clk clock.PassiveClock) *Flow {
	f := &Flow{cluster: cluster, clock: clk, window: newWindow(l), metrics: metricsFor(cluster)}
	f.metrics.limit.Set(float64(f.window.limit()))
	return f
}

// Configure returns a copy of cfg whose clients send through this Flow and carry no client-side
// rate limit: no token bucket, whatever the kubeconfig's QPS said.
func (f *Flow) Configure(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, -1, nil
	cfg.Wrap(newTransport(f, apiBasePath(cfg)))
	return cfg
}

// Forget drops the cluster's metric series; call it once the cluster is no longer a member.
func (f *Flow) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = true
	forgetMetrics(f.cluster)
}

// Limit is the number of requests the Flow lets in flight now.
func (f *Flow) Limit() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.window.limit()
}

// acquire waits for a slot, first come first served, until ctx ends.
func (f *Flow) acquire(ctx context.Context) error {
	f.mu.Lock()
	if len(f.waiters) == 0 && f.inFlight < f.window.limit() {
		f.inFlight++
		f.metrics.inFlight.Set(float64(f.inFlight))
		f.mu.Unlock()
		f.metrics.wait.Observe(0)
		return nil
	}
	granted := make(chan struct{})
	f.waiters = append(f.waiters, granted)
	f.mu.Unlock()
	start := f.clock.Now()
	select {
	case <-granted:
		f.metrics.wait.Observe(f.clock.Since(start).Seconds())
		return nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, w := range f.waiters {
		if w == granted {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return fmt.Errorf("waiting for a request slot to cluster %s: %w", f.cluster, ctx.Err())
		}
	}
	// Granted while giving up: pass the slot on.
	f.inFlight--
	f.grantLocked()
	return fmt.Errorf("waiting for a request slot to cluster %s: %w", f.cluster, ctx.Err())
}

// release frees a slot taken by acquire.
func (f *Flow) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight--
	f.grantLocked()
}

// observe feeds one response to the window; r.busy is filled in here.
func (f *Flow) observe(r response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.busy = 2*f.inFlight >= f.window.limit()
	before := f.window.limit()
	why := f.window.observe(r)
	if r.wait {
		f.metrics.throttled.Inc()
	}
	if r.write && !r.failed && !f.forgotten {
		f.metrics.write.Observe(r.answered.Sub(r.sent).Seconds())
	}
	if why != noDecrease && !f.forgotten {
		f.metrics.decreases.WithLabelValues(f.cluster, string(why)).Inc()
	}
	if after := f.window.limit(); after != before {
		f.metrics.limit.Set(float64(after))
		f.grantLocked()
	}
}

// grantLocked hands free slots to waiters in order.
func (f *Flow) grantLocked() {
	for len(f.waiters) > 0 && f.inFlight < f.window.limit() {
		close(f.waiters[0])
		f.waiters = f.waiters[1:]
		f.inFlight++
	}
	f.metrics.inFlight.Set(float64(f.inFlight))
}
