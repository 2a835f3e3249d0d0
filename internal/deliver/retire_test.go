package deliver

import (
	"context"
	"errors"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// awayClusters knows no cluster: every delivery ends Disconnected, which is enough to see
// workers start, run and stop.
type awayClusters struct{}

func (awayClusters) Get(context.Context, multicluster.ClusterName) (cluster.Cluster, error) {
	return nil, errors.New("not engaged")
}

func TestWorkerRetiresWithItsLastJobAndComesBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, awayClusters{}, func(render.Owner) {}, Options{VerifyInterval: -1})
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

// blockedClusters stands for a spoke that does not answer: a delivery waits in Get until its
// context ends, and says so on ended.
type blockedClusters struct {
	started chan struct{}
	ended   chan error
}

func (b blockedClusters) Get(ctx context.Context, _ multicluster.ClusterName) (cluster.Cluster, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

func TestRetiringAWorkerCancelsItsDeliveryInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clusters := blockedClusters{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	// Only retiring the worker can end the delivery within the test's deadline.
	d := New(ctx, clusters, func(render.Owner) {}, Options{VerifyInterval: -1, WorkersPerCluster: 1, JobTimeout: time.Hour})
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}

	d.Submit(Job{Owner: owner, Cluster: "a", Revision: "1"})
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
