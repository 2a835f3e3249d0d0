package deliver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
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

func TestWatchHandlersFollowTheEngagement(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	w := d.worker("a")
	kinds := []string{"ConfigMap", "Secret"}
	kindsWatched := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.watches == nil {
			return 0
		}
		return len(w.watches.kinds)
	}

	var previous *instance
	var previousEngagement *engagement
	var disengage context.CancelFunc
	for round := range 100 { // credentials rotated, or the spoke back from an outage, each time
		current := newInstance()
		if disengage != nil {
			disengage() // multicluster-runtime ends the old engagement when the spoke is engaged again
		}
		var engaged context.Context
		engaged, disengage = context.WithCancel(ctx)
		if err := d.Engage(engaged, "a", current); err != nil {
			t.Fatal(err)
		}
		e := d.engagement("a")
		if e == nil || e.cl != current {
			t.Fatalf("round %d: the engaged instance is not the one deliveries use", round)
		}
		for _, kind := range kinds {
			w.watch(e, corev1.SchemeGroupVersion.WithKind(kind))
		}
		if previous != nil {
			// A delivery that started before the cluster was engaged again.
			w.watch(previousEngagement, corev1.SchemeGroupVersion.WithKind("Service"))
			fleettest.Eventually(t, 10*time.Second, "handlers of the previous instance removed", func() error {
				if n := previous.cache.inf.count(); n != 0 {
					return fmt.Errorf("round %d: the previous instance still carries %d handlers", round, n)
				}
				return nil
			})
		}
		if n := current.cache.inf.count(); n != len(kinds) {
			t.Fatalf("round %d: the engaged instance carries %d handlers, want %d", round, n, len(kinds))
		}
		if n := kindsWatched(); n != len(kinds) {
			t.Fatalf("round %d: %d kinds recorded as watched, want %d", round, n, len(kinds))
		}
		previous, previousEngagement = current, e
	}

	// Disengaged: no instance for deliveries, and no handlers left behind.
	disengage()
	fleettest.Eventually(t, 10*time.Second, "disengaged", func() error {
		if d.engagement("a") != nil {
			return errors.New("a disengaged cluster still has an engaged instance")
		}
		if n := previous.cache.inf.count(); n != 0 {
			return fmt.Errorf("the disengaged instance still carries %d handlers", n)
		}
		return nil
	})
}

func TestRetiredWorkerLeavesNoHandlers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, func(render.Owner) {}, Options{VerifyInterval: -1})
	inst := newInstance()
	if err := d.Engage(ctx, "a", inst); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "ClusterPropagation", Name: "web"}
	w := d.worker("a")
	w.watch(d.engagement("a"), corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if n := inst.cache.inf.count(); n != 1 {
		t.Fatalf("the engaged instance carries %d handlers, want 1", n)
	}
	d.Forget(owner, "a") // the worker retires
	fleettest.Eventually(t, 10*time.Second, "handlers removed", func() error {
		if n := inst.cache.inf.count(); n != 0 {
			return fmt.Errorf("a retired worker left %d handlers", n)
		}
		return nil
	})
}
