package deliver

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestWorkerRetiresWithItsLastJobAndComesBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// No cluster is engaged: every delivery ends Disconnected, which is enough to see workers
	// start, run and stop.
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	delivered := func() error {
		if r, ok := d.Result(owner, "a"); !ok || !r.Disconnected {
			return errors.New("no result yet")
		}
		return nil
	}

	d.Submit(Job{Owner: owner, Cluster: "a", Revision: "1"})
	fleettest.Eventually(t, 10*time.Second, "first delivery", delivered)
	first, _ := d.existingWorker("a")

	d.Forget(owner, "a")
	if _, ok := d.existingWorker("a"); ok {
		t.Fatal("a worker without jobs was kept")
	}
	select {
	case <-first.ctx.Done():
	default:
		t.Fatal("the retired worker was not stopped")
	}

	d.Submit(Job{Owner: owner, Cluster: "a", Revision: "2"})
	fleettest.Eventually(t, 10*time.Second, "delivery by a new worker", delivered)
	if second, ok := d.existingWorker("a"); !ok || second == first {
		t.Fatal("no new worker took the job")
	}
}

// blockedCache stands for a spoke that does not answer: a read waits until its context ends,
// and says so on ended.
type blockedCache struct {
	instanceCache
	started chan struct{}
	ended   chan error
}

func (b blockedCache) Get(ctx context.Context, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return ctx.Err()
}

type blockedInstance struct {
	cluster.Cluster
	cache blockedCache
}

func (b *blockedInstance) GetCache() cache.Cache { return b.cache }

func (b *blockedInstance) GetAPIReader() client.Reader { return nil }

func TestRetiringAWorkerCancelsItsDeliveryInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clusters := blockedCache{instanceCache: instanceCache{inf: &handlerCount{}}, started: make(chan struct{}, 1), ended: make(chan error, 1)}
	// Only retiring the worker can end the delivery within the test's deadline.
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1, WorkersPerCluster: 1, JobTimeout: time.Hour})
	if err := d.Engage(ctx, "a", &blockedInstance{cache: clusters}); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "ClusterPropagation", Name: "web"}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("team")
	cm.SetName("settings")

	d.Submit(Job{Owner: owner, Cluster: "a", Revision: "1", Objects: []*unstructured.Unstructured{cm}})
	select {
	case <-clusters.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery did not start")
	}
	w, _ := d.existingWorker("a")
	d.Forget(owner, "a")
	select {
	case err := <-clusters.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the delivery ended with %v, want it cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the retired worker's delivery is still in flight")
	}
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the retired worker's goroutines did not end")
	}
	if _, ok := d.Result(owner, "a"); ok {
		t.Fatal("a cancelled delivery left a result for an owner that forgot the cluster")
	}
}
