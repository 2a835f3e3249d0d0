package deliver

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// handlerCount is an informer that only counts the event handlers it carries.
type handlerCount struct {
	cache.Informer
	mu sync.Mutex
	n  int
}

type registration struct {
	toolscache.ResourceEventHandlerRegistration
}

func (i *handlerCount) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	return registration{}, nil
}

func (i *handlerCount) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n--
	return nil
}

func (i *handlerCount) count() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.n
}

// instanceCache is one engaged cluster instance's cache: one informer stands for every kind.
type instanceCache struct {
	cache.Cache
	inf *handlerCount
}

func (c instanceCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return c.inf, nil
}

type instance struct {
	cluster.Cluster
	cache instanceCache
}

func newInstance() *instance { return &instance{cache: instanceCache{inf: &handlerCount{}}} }

func (i *instance) GetCache() cache.Cache { return i.cache }

// engagedInstance returns the instance of the cluster engaged now.
type engagedInstance struct {
	mu sync.Mutex
	cl cluster.Cluster
}

func (e *engagedInstance) Get(context.Context, multicluster.ClusterName) (cluster.Cluster, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cl == nil {
		return nil, errors.New("not engaged")
	}
	return e.cl, nil
}

func (e *engagedInstance) engage(cl cluster.Cluster) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cl = cl
}

func TestWatchRecordsFollowTheEngagedInstance(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	engaged := &engagedInstance{}
	d := New(ctx, engaged, func(render.Owner) {}, Options{VerifyInterval: -1})
	w := d.worker("a")
	kinds := []string{"ConfigMap", "Secret"}
	records := func() (watching, unwatch int) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.watching), len(w.unwatch)
	}

	var previous *instance
	for round := range 100 { // credentials rotated, or the spoke back from an outage, each time
		current := newInstance()
		engaged.engage(current)
		for _, kind := range kinds {
			w.watch(ctx, current, corev1.SchemeGroupVersion.WithKind(kind))
		}
		if previous != nil {
			// A delivery that started before the cluster was engaged again.
			w.watch(ctx, previous, corev1.SchemeGroupVersion.WithKind("Service"))
			if n := previous.cache.inf.count(); n != 0 {
				t.Fatalf("round %d: the previous instance still carries %d handlers", round, n)
			}
		}
		if n := current.cache.inf.count(); n != len(kinds) {
			t.Fatalf("round %d: the engaged instance carries %d handlers, want %d", round, n, len(kinds))
		}
		if watching, unwatch := records(); watching != len(kinds) || unwatch != len(kinds) {
			t.Fatalf("round %d: %d watch records and %d handler removals kept, want %d of each", round, watching, unwatch, len(kinds))
		}
		previous = current
	}
}
