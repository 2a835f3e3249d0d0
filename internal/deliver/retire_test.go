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
