package shard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A delivery's writes to a cluster are sent only while the replica can count on the cluster's
// fence: a replica that resumes after a pause longer than the fence's life (its process
// stopped, say) does not finish the writes it was making, though its loop has not yet stopped
// the delivery; its reads go on.
func TestFencedClusterSendsWritesOnlyWhileTheFenceHolds(t *testing.T) {
	var writes, reads atomic.Int32
	spoke := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			reads.Add(1)
		} else {
			writes.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(spoke.Close)
	f := &fence{key: client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-spoke-1"}, duration: 15 * time.Second}
	cfg := fencedCluster{Cluster: configOnly{cfg: &rest.Config{Host: spoke.URL}}, fence: f}.GetConfig()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method string) error {
		req, _ := http.NewRequest(method, spoke.URL+"/api/v1/namespaces/team/configmaps/web", strings.NewReader("{}"))
		resp, err := httpClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	f.setRenewed(time.Now())
	if err := send(http.MethodPatch); err != nil || writes.Load() != 1 {
		t.Fatalf("a write while the fence holds was not sent (err %v, %d writes)", err, writes.Load())
	}
	for name, renewed := range map[string]time.Time{"past two thirds of its life": time.Now().Add(-11 * time.Second), "released": {}} {
		f.setRenewed(renewed)
		for _, method := range []string{http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodDelete} {
			if err := send(method); err == nil || !strings.Contains(err.Error(), "no longer holds the cluster's fence") {
				t.Errorf("fence %s: %s was not refused (err %v)", name, method, err)
			}
		}
		if err := send(http.MethodGet); err != nil {
			t.Errorf("fence %s: a read was refused: %v", name, err)
		}
	}
	if writes.Load() != 1 || reads.Load() != 2 {
		t.Errorf("the spoke saw %d writes and %d reads, want 1 and 2", writes.Load(), reads.Load())
	}
}

// A write that waited in an inner layer (the spoke's flow control) while the fence went is
// refused when it would be sent: the guard sits next to the wire.
func TestFencedClusterChecksAWriteWhenItIsSent(t *testing.T) {
	var writes atomic.Int32
	spoke := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(spoke.Close)
	queued, release := make(chan struct{}), make(chan struct{})
	flow := func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			close(queued)
			<-release
			return next.RoundTrip(req)
		})
	}
	f := &fence{key: client.ObjectKey{Namespace: "flotilla-system", Name: "flotilla-shard-spoke-1"}, duration: 15 * time.Second}
	f.setRenewed(time.Now())
	cfg := fencedCluster{Cluster: configOnly{cfg: &rest.Config{Host: spoke.URL, WrapTransport: flow}}, fence: f}.GetConfig()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPatch, spoke.URL+"/api/v1/namespaces/team/configmaps/web", strings.NewReader("{}"))
		resp, err := httpClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-queued
	f.setRenewed(time.Time{}) // the fence went while the write waited
	close(release)
	if err := <-done; err == nil || writes.Load() != 0 {
		t.Fatalf("a write queued while the fence held was sent after it went (err %v, %d writes)", err, writes.Load())
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// client-go cancels a timed-out request through every layer that says what it wraps.
var _ utilnet.RoundTripperWrapper = fenceGuard{}

// configOnly is a cluster of which only the REST config is asked.
type configOnly struct {
	cluster.Cluster
	cfg *rest.Config
}

func (c configOnly) GetConfig() *rest.Config { return c.cfg }

// stuckAgents stands for an aware component that ignores its context: what it runs for a
// cluster never stops. It keeps every cluster it was handed.
type stuckAgents struct {
	mu      sync.Mutex
	handed  []cluster.Cluster
	forever chan struct{}
}

func (s *stuckAgents) Engage(_ context.Context, _ multicluster.ClusterName, cl cluster.Cluster) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handed = append(s.handed, cl)
	return nil
}

func (s *stuckAgents) WaitStopped(ctx context.Context, _ string) {
	select {
	case <-s.forever:
	case <-ctx.Done():
	}
}

// A delivery that does not stop within stopWait after it was told to loses its writes for good:
// the coordinator gives its fence up then, and once this replica holds the fence again for a
// new delivery, the old one (still running) must not write beside it.
func TestAnAbandonedDeliveryCannotWriteWhenTheFenceIsHeldAgain(t *testing.T) {
	ctx := context.Background()
	var writes atomic.Int32
	spoke := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(spoke.Close)
	kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	c := New(kube, Options{ID: "hub-0", Namespace: "flotilla-system"}, logr.Discard())
	c.stopWait = 100 * time.Millisecond
	c.peers.since, c.peers.looked = time.Now().Add(-time.Minute), true
	c.peers.alive = []sharder.PeerInfo{{ID: "hub-0", Weight: 1}}
	agents := &stuckAgents{forever: make(chan struct{})}
	c.AddAware(agents)
	spokeCluster := configOnly{cfg: &rest.Config{Host: spoke.URL}}
	if err := c.Engage(ctx, "spoke-1", spokeCluster); err != nil {
		t.Fatal(err)
	}
	c.decide(ctx)
	setAlive := func(ids ...string) {
		c.peers.mu.Lock()
		defer c.peers.mu.Unlock()
		c.peers.alive = nil
		for _, id := range ids {
			c.peers.alive = append(c.peers.alive, sharder.PeerInfo{ID: id, Weight: 1})
		}
	}
	setAlive("hub-1") // another replica is to deliver to spoke-1: this one stops
	fleettest.Eventually(t, 10*time.Second, "the stuck delivery given up and its fence released", func() error {
		c.decide(ctx)
		if c.isDraining("spoke-1") || c.clusters["spoke-1"].fence.renewed() != (time.Time{}) {
			return fmt.Errorf("spoke-1's fence still held")
		}
		return nil
	})
	setAlive("hub-0") // spoke-1 is this replica's again: the same fence is held again
	c.decide(ctx)
	agents.mu.Lock()
	handed := slices.Clone(agents.handed)
	agents.mu.Unlock()
	if len(handed) != 2 {
		t.Fatalf("%d deliveries started, want 2 (the stuck one, then the new one)", len(handed))
	}
	write := func(cl cluster.Cluster) error {
		httpClient, err := rest.HTTPClientFor(cl.GetConfig())
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPatch, spoke.URL+"/api/v1/namespaces/team/configmaps/web", strings.NewReader("{}"))
		resp, err := httpClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := write(handed[0]); err == nil || !strings.Contains(err.Error(), "did not end in time") {
		t.Errorf("the abandoned delivery's write was not refused (err %v)", err)
	}
	if err := write(handed[1]); err != nil {
		t.Errorf("the new delivery's write was refused: %v", err)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("the spoke took %d writes, want 1 (the new delivery's)", n)
	}
}
