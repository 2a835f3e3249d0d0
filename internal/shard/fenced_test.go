package shard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
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
