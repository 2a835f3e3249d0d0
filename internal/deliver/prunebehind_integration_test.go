package deliver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A prune, and an owner's removal, delete what an earlier delivery applied even when the spoke
// cache has not shown it yet: a cache is behind the deliverer's own writes for a moment, and
// for as long as its watch is down while the spoke's API server restarts. Before, a prune
// took the cache's silence for absence, recorded the owner's leftovers as pruned, and no
// later delivery looked for the object again (seen in a soak: a ConfigMap deleted on the hub
// stayed on a spoke for good).
func TestPruneDeletesWhatTheCacheHasNotShownYet(t *testing.T) {
	ctx, spoke, admin := oneSpoke(t, false, "team")
	behind := &behindCluster{Cluster: startSpoke(ctx, t, spoke)}
	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})
	if err := d.Engage(ctx, "a", behind); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	configMaps := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	deliverNow := func(revision string, names ...string) {
		t.Helper()
		var objs []*unstructured.Unstructured
		for _, n := range names {
			objs = append(objs, rendered(t, owner, "team", n))
		}
		d.Submit(deliver.Job{Owner: owner, Cluster: "a", Objects: objs, Revision: revision, Prune: true,
			PruneKinds: configMaps, Strategy: decide.Strategy{PruneBudget: decide.Unbudgeted}})
		fleettest.Eventually(t, 30*time.Second, "delivery "+revision+" complete", func() error {
			if r, ok := d.Result(owner, "a"); !ok || r.Revision != revision || !r.Complete {
				return fmt.Errorf("not complete: %+v", r)
			}
			return nil
		})
	}
	absent := func(name string) {
		t.Helper()
		err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("ConfigMap %s is still on the spoke after a complete delivery that no longer wants it (%v)", name, err)
		}
	}

	deliverNow("r1", "keep")
	behind.hide("late")
	deliverNow("r2", "keep", "late")
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "late"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the delivery did not apply the ConfigMap: %v", err)
	}
	deliverNow("r3", "keep")
	absent("late")

	behind.hide("late-too")
	deliverNow("r4", "keep", "late-too")
	deliverNow("removed")
	absent("keep")
	absent("late-too")
}

// behindCluster is a spoke whose cache has not shown some objects yet.
type behindCluster struct {
	cluster.Cluster
	mu     sync.Mutex
	hidden map[string]bool
}

func (c *behindCluster) hide(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hidden == nil {
		c.hidden = map[string]bool{}
	}
	c.hidden[name] = true
}

func (c *behindCluster) isHidden(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hidden[name]
}

func (c *behindCluster) GetCache() cache.Cache {
	return behindCache{Cache: c.Cluster.GetCache(), cluster: c}
}

type behindCache struct {
	cache.Cache
	cluster *behindCluster
}

func (c behindCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c.cluster.isHidden(key.Name) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c behindCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		kept := u.Items[:0]
		for _, o := range u.Items {
			if !c.cluster.isHidden(o.GetName()) {
				kept = append(kept, o)
			}
		}
		u.Items = kept
	}
	return nil
}
