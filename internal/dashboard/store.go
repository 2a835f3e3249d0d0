package dashboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// The hub's dashboard (flotilla hub --dashboard-bind-address) watches Flotilla's Events; the
// kinds of Flotilla it watches the controller reads anyway.
// +kubebuilder:rbac:groups="",resources=events,verbs=list;watch

// kind is one kind the store caches, with what a viewer must be allowed to read it.
type kind struct {
	obj        client.Object
	group      string
	resource   string
	namespaced bool
}

// cachedKinds are every kind a page shows. Secrets are not among them, ever.
var cachedKinds = []kind{
	{&flotillav1.Cluster{}, flotillav1.GroupVersion.Group, "clusters", false},
	{&flotillav1.Placement{}, flotillav1.GroupVersion.Group, "placements", true},
	{&flotillav1.Propagation{}, flotillav1.GroupVersion.Group, "propagations", true},
	{&flotillav1.ClusterPropagation{}, flotillav1.GroupVersion.Group, "clusterpropagations", false},
	{&flotillav1.APIPropagation{}, flotillav1.GroupVersion.Group, "apipropagations", false},
	{&flotillav1.Delivery{}, flotillav1.GroupVersion.Group, "deliveries", true},
	{&corev1.Event{}, "", "events", true},
}

// store is the informer cache pages are rendered from, and tells SSE streams when it changes.
type store struct {
	reader client.Reader   // the informers' cache
	cached map[string]bool // resources the cache holds (local mode: the ones the user may list)

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each change
	version uint64
}

// newStore starts informers with cfg for the kinds in resources and waits until they are synced.
func newStore(ctx context.Context, cfg *rest.Config, resources map[string]bool) (*store, error) {
	// Only Flotilla's own Events: the hub's other Events are not a dashboard's business.
	events := fields.OneTermEqualSelector("involvedObject.apiVersion", flotillav1.GroupVersion.String())
	c, err := cache.New(cfg, cache.Options{
		Scheme:   install.Scheme(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Event{}: {Field: events}},
		// Pages never show managed fields; the cache need not hold them.
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	s := &store{reader: c, cached: resources, changed: make(chan struct{})}
	notify := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.bump() },
		UpdateFunc: func(any, any) { s.bump() },
		DeleteFunc: func(any) { s.bump() },
	}
	for _, k := range cachedKinds {
		if !resources[k.resource] {
			continue
		}
		inf, err := c.GetInformer(ctx, k.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", k.resource, err)
		}
		if _, err := inf.AddEventHandler(notify); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, fmt.Errorf("the dashboard's cache of the hub did not sync within a minute")
	}
	return s, nil
}

// bump says the cache changed.
func (s *store) bump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

// watch returns the cache's version and a channel closed at its next change.
func (s *store) watch() (uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.changed
}

// list lists a cached kind; a kind the cache does not hold lists nothing.
func (s *store) list(ctx context.Context, resource string, list client.ObjectList, opts ...client.ListOption) error {
	if !s.cached[resource] {
		return nil
	}
	return s.reader.List(ctx, list, opts...)
}
