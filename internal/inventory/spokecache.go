package inventory

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/intern"
	"github.com/flotilla-dev/flotilla/internal/owners"
)

// spokeCache decides what one engaged spoke's cache keeps of the objects carrying the owner
// label (the cache's selector: their presence, which any spoke user can write). An object is
// kept whole when its label names a known owner and it sits where that owner delivers (its
// namespace, for a namespaced owner), and while the cluster's cacheBudget has room; any other is
// kept as a stub (stubOf), which the readers of the cache never see (stubReadingCache).
type spokeCache struct {
	cluster string
	owners  *owners.Registry // nil: every owner is known
	budget  *cacheBudget
	whole   toolscache.TransformFunc // what a whole object goes through
}

func newSpokeCache(cluster string, reg *owners.Registry, budget *cacheBudget, table *intern.Table) *spokeCache {
	return &spokeCache{cluster: cluster, owners: reg, budget: budget, whole: spokeObjectTransform(table)}
}

// transform is the cache's default transform.
func (s *spokeCache) transform(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok {
		return s.whole(obj)
	}
	if s.owners == nil || s.owners.Keeps(s.cluster, label(o, flotillav1.LabelOwner), o.GetNamespace()) {
		if s.budget.admit(o.GetUID(), sizeOf(obj)) {
			unmarkStub(o)
			return s.whole(obj)
		}
	} else {
		s.budget.stub(o.GetUID())
	}
	return stubOf(o), nil
}

// newInformer builds the cache's informers, each with a handler giving the budget back what a
// deleted or replaced object took.
func (s *spokeCache) newInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	inf := toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			if uid := uidOf(old); uid != uidOf(obj) {
				s.budget.forget(uid) // replaced by a namesake, seen on a relist
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			s.budget.forget(uidOf(obj))
		},
	})
	return inf
}

// newCache builds the spoke cache: controller-runtime's, read through stubReadingCache.
func (s *spokeCache) newCache(config *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(config, opts)
	if err != nil {
		return nil, err
	}
	direct, err := client.New(config, client.Options{HTTPClient: opts.HTTPClient, Scheme: opts.Scheme, Mapper: opts.Mapper})
	if err != nil {
		return nil, err
	}
	return &stubReadingCache{Cache: c, direct: direct, cluster: s.cluster}, nil
}

// stubReadingCache answers reads of a stub from the spoke itself: to every reader (the
// deliverer, status, fleet APIs, the spoke's client) a stub is "not in the cache".
type stubReadingCache struct {
	cache.Cache
	direct  client.Reader
	cluster string
}

// Get implements client.Reader.
func (c *stubReadingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Cache.Get(ctx, key, obj, opts...); err != nil || !isStub(obj) {
		return err
	}
	stubReads.WithLabelValues(c.cluster).Inc()
	return c.direct.Get(ctx, key, obj, opts...)
}

// List implements client.Reader. A list holding stubs is read again from the spoke, once,
// restricted to what the cache selects (objects carrying the owner label); one with a field
// selector (served by the cache's indexes, not the spoke's) has its stubs read one by one.
func (c *stubReadingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	stubs := 0
	for _, item := range items {
		if o, ok := item.(client.Object); ok && isStub(o) {
			stubs++
		}
	}
	if stubs == 0 {
		return nil
	}
	stubReads.WithLabelValues(c.cluster).Add(float64(stubs))
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		return c.readStubs(ctx, list, items)
	}
	if err := c.direct.List(ctx, list, opts...); err != nil {
		return err
	}
	if items, err = meta.ExtractList(list); err != nil {
		return err
	}
	kept := items[:0]
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			if _, labelled := o.GetLabels()[flotillav1.LabelOwner]; labelled {
				kept = append(kept, item)
			}
		}
	}
	return meta.SetList(list, kept)
}

// readStubs replaces each stub of a list with the object read from the spoke (dropping those
// gone since).
func (c *stubReadingCache) readStubs(ctx context.Context, list client.ObjectList, items []runtime.Object) error {
	kept := items[:0]
	for _, item := range items {
		o, ok := item.(client.Object)
		if ok && isStub(o) {
			full := o.DeepCopyObject().(client.Object)
			if u, isU := full.(*unstructured.Unstructured); isU {
				u.Object = map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}
			}
			err := c.direct.Get(ctx, client.ObjectKeyFromObject(o), full)
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err != nil {
				continue
			}
			item = full
		}
		kept = append(kept, item)
	}
	return meta.SetList(list, kept)
}
