package transparent

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

var deployments = appsv1.SchemeGroupVersion.WithKind("Deployment")

// returnsWithin fails the test if fn does not return within d.
func returnsWithin(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}

func TestNotifyDoesNotWaitForTheController(t *testing.T) {
	// A manager that is never started: nothing will ever take a notification.
	skip := true
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: install.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{GVK: deployments}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	returnsWithin(t, 10*time.Second, "Notify while the controller takes nothing", func() {
		for i := range 10_000 {
			r.Notify(render.Owner{Kind: r.OwnerKind(), Namespace: "team", Name: fmt.Sprintf("d%d", i)})
		}
	})
}

// stuckSpoke is an engaged spoke whose cache never syncs: reads wait until their context ends.
type stuckSpoke struct{ cluster.Cluster }

func (stuckSpoke) GetCache() cache.Cache { return stuckCache{} }

type stuckCache struct{ cache.Cache }

func (stuckCache) Get(ctx context.Context, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	<-ctx.Done()
	return ctx.Err()
}

type spokes map[string]cluster.Cluster

func (s spokes) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	if cl, ok := s[string(name)]; ok {
		return cl, nil
	}
	return nil, errors.New("not engaged")
}

func (spokes) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func TestStatusDoesNotWaitForAStuckSpokeCache(t *testing.T) {
	r := &Reconciler{GVK: deployments, Hub: fake.NewClientBuilder().WithScheme(install.Scheme()).Build(),
		Clusters: spokes{"stuck": stuckSpoke{}}}
	u := r.newObject()
	u.SetNamespace("team")
	u.SetName("web")
	returnsWithin(t, spokeReadTimeout+10*time.Second, "a status pass over a spoke whose cache does not sync", func() {
		if err := r.writeStatus(context.Background(), u, []string{"stuck", "away"}, nil, nil, nil); err != nil {
			t.Error(err)
		}
	})
}
