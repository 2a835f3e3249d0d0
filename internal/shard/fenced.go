package shard

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// fencedCluster is a cluster as this replica's delivery to it sees it: every client made from
// its REST config (GetConfig: the agent's) sends a write only while the replica can count on
// the cluster's fence. The coordinator's loop stops a delivery whose fence it cannot renew, but
// it looks every few seconds; a replica paused (a stopped process, a long garbage collection)
// past its fence's life would otherwise finish the writes it was making when it resumes, after
// another replica took the cluster. The clock that says so is the monotonic one, which runs on
// while the process is stopped.
//
// abandoned ends the delivery's writes for good: set when the delivery did not stop within
// stopWait after it was told to (the coordinator gives its fence up then, and may hold the
// fence again for a later delivery, which the old one must not write beside).
type fencedCluster struct {
	cluster.Cluster
	fence     *fence
	abandoned *atomic.Bool
}

// GetConfig wraps the guard innermost, next to the wire: a write that waited in the spoke's
// flow control (spokeclient) for a slot is checked when it is sent, not when it was queued.
func (c fencedCluster) GetConfig() *rest.Config {
	cfg := rest.CopyConfig(c.Cluster.GetConfig())
	guard := func(next http.RoundTripper) http.RoundTripper {
		return fenceGuard{next: next, fence: c.fence, abandoned: c.abandoned}
	}
	cfg.WrapTransport = transport.Wrappers(guard, cfg.WrapTransport)
	return cfg
}

// fenceGuard refuses a write (any request but a read) while its fence does not hold.
type fenceGuard struct {
	next      http.RoundTripper
	fence     *fence
	abandoned *atomic.Bool // nil: never abandoned
}

func (g fenceGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return g.next.RoundTrip(req)
	}
	if g.abandoned != nil && g.abandoned.Load() {
		return nil, fmt.Errorf("this delivery to the cluster was stopped and did not end in time (fence Lease %s): its writes are no longer sent", g.fence.key)
	}
	if !g.fence.held(time.Now()) {
		return nil, fmt.Errorf("this hub replica no longer holds the cluster's fence (Lease %s): another replica delivers to the cluster; the write was not sent", g.fence.key)
	}
	return g.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go cancel a request through the guard.
func (g fenceGuard) WrappedRoundTripper() http.RoundTripper { return g.next }
