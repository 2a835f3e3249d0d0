package instances

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// spoke is one engaged instance of a cluster: its caches, and the informers over the instances
// of each kind it serves. Everything here ends with the engagement's context, which
// multicluster-runtime ends when the spoke is disengaged or engaged again; nothing is deleted
// then.
type spoke struct {
	name string
	cl   cluster.Cluster
	ctx  context.Context
	dyn  dynamic.Interface
	// queue holds the spoke's instances to reconcile (queue.go).
	queue workqueue.TypedRateLimitingInterface[request]

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kindWatch
	// children are the kinds whose changes in the spoke cache are routed to their instances.
	children map[schema.GroupVersionKind]bool
	// externals are the shared watches of external references (externals.go).
	externals map[externalKey]*externalWatch
	// later are the late looks due at instances whose pass their CEL cost stopped (queue.go).
	later map[Instance]*time.Timer
}

// kindWatch is the informer over the instances of one served kind.
type kindWatch struct {
	informer toolscache.SharedIndexInformer
	stop     context.CancelFunc
	// revision and clusterWide are the graph's as last seen: a change of either evaluates
	// every instance again.
	revision    string
	clusterWide bool
}

// Engage implements multicluster.Aware: the instances of the kinds the cluster serves are
// watched until ctx ends. It never blocks.
func (c *Controller) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	dyn, err := dynamic.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("dynamic client for cluster %s: %w", name, err)
	}
	s := &spoke{name: string(name), cl: cl, ctx: ctx, dyn: dyn, queue: newQueue(string(name)),
		kinds: map[schema.GroupVersionKind]*kindWatch{}, children: map[schema.GroupVersionKind]bool{},
		externals: map[externalKey]*externalWatch{}}
	c.mu.Lock()
	if old := c.spokes[s.name]; old != nil && old.cl == cl && old.ctx.Err() == nil {
		c.mu.Unlock()
		return nil
	}
	c.spokes[s.name] = s
	c.startWorkersLocked(s)
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.spokes[s.name] == s {
			delete(c.spokes, s.name)
		}
	})
	c.sync(s.name)
	return nil
}

// spoke returns the cluster's engaged instance, nil when it is not engaged.
func (c *Controller) spoke(name string) *spoke {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.spokes[name]; s != nil && s.ctx.Err() == nil {
		return s
	}
	return nil
}

// sync makes a cluster's informers match the kinds it serves: new kinds are watched, kinds no
// longer served are not (their instances' jobs stop; nothing is deleted), and the instances of
// a kind whose graph changed are evaluated again.
func (c *Controller) sync(cluster string) {
	s := c.spoke(cluster)
	if s == nil {
		return
	}
	want := map[schema.GroupVersionKind]Graph{}
	for _, g := range c.graphs.Served(cluster) {
		want[g.Kind()] = g
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for kind, kw := range s.kinds {
		if _, ok := want[kind]; !ok {
			kw.stop()
			delete(s.kinds, kind)
			go c.countsChanged(cluster, kind) // not under s.mu: subscribers may ask for Counts
			for _, obj := range kw.informer.GetStore().List() {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					req := newRequest(cluster, kind, u.GetNamespace(), u.GetName())
					s.useExternalsLocked(req.Request, nil)
					c.forget(ownerOf(req))
					if c.opts.Owners != nil {
						c.opts.Owners.Remove(ownerOf(req))
					}
				}
			}
		}
	}
	for kind, g := range want {
		if kw := s.kinds[kind]; kw == nil {
			s.kinds[kind] = c.watchInstances(s, g)
		} else if kw.revision != g.Revision || kw.clusterWide != g.ClusterWide {
			kw.revision, kw.clusterWide = g.Revision, g.ClusterWide
			for _, key := range kw.informer.GetStore().ListKeys() {
				ns, name, _ := toolscache.SplitMetaNamespaceKey(key)
				s.enqueue(kind, ns, name)
			}
		}
		for _, kind := range childKinds(g.Compiled) {
			c.watchChildrenLocked(s, kind)
		}
	}
}

// watchInstances starts an informer over every instance of a kind on the spoke. The spoke
// cache cannot serve: it holds only objects carrying Flotilla's owner label, and users create
// instances without it.
func (c *Controller) watchInstances(s *spoke, g Graph) *kindWatch {
	kind := g.Kind()
	informer := dynamicinformer.NewFilteredDynamicInformer(s.dyn, g.Compiled.InstanceResource(), metav1.NamespaceAll, 0,
		toolscache.Indexers{}, nil).Informer()
	_ = informer.SetTransform(cache.TransformStripManagedFields())
	queue := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			s.enqueue(kind, u.GetNamespace(), u.GetName())
		}
	}
	// The counts change with an instance's arrival, departure, state or reason, not with
	// every write of its status; the initial list is one change, told once synced.
	counted := func(obj any) {
		if informer.HasSynced() {
			c.countsChanged(s.name, kind)
		}
	}
	if c.opts.Owners != nil {
		_, _ = informer.AddEventHandler(c.opts.Owners.Feed(g.ClusterWide, func(obj any) (render.Owner, bool) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return render.Owner{}, false
			}
			return ownerOf(newRequest(s.name, kind, u.GetNamespace(), u.GetName())), true
		}))
	}
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { queue(obj); counted(obj) },
		UpdateFunc: func(old, obj any) {
			queue(obj)
			o, ok1 := old.(*unstructured.Unstructured)
			n, ok2 := obj.(*unstructured.Unstructured)
			if ok1 && ok2 && summarize(o) != summarize(n) {
				counted(obj)
			}
		},
		DeleteFunc: func(obj any) { queue(obj); counted(obj) },
	})
	ctx, stop := context.WithCancel(s.ctx)
	go informer.RunWithContext(ctx)
	go func() {
		if toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			// The initial list's events may be handled before the informer says it has synced,
			// and a pass that finds it not synced leaves the instance to the informer's next
			// event, which an instance nobody changes never has: each is queued once more.
			for _, key := range informer.GetStore().ListKeys() {
				ns, name, _ := toolscache.SplitMetaNamespaceKey(key)
				s.enqueue(kind, ns, name)
			}
			c.countsChanged(s.name, kind)
		}
	}()
	return &kindWatch{informer: informer, stop: stop, revision: g.Revision, clusterWide: g.ClusterWide}
}

// watchChildrenLocked routes changes of a child kind in the spoke cache (which holds the
// children: the deliverer labels them as the instance's) to the instance they belong to, read
// from kro's instance labels: readyWhen and status fields can read any field of a child.
func (c *Controller) watchChildrenLocked(s *spoke, kind schema.GroupVersionKind) {
	if s.children[kind] {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	informer, err := s.cl.GetCache().GetInformer(s.ctx, u, cache.BlockUntilSynced(false))
	if err != nil {
		c.log.V(1).Info("Cannot watch a child kind; its changes reach instances through deliveries only",
			"cluster", s.name, "kind", kind.String(), "error", err.Error())
		return
	}
	route := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if req, ok := instanceOf(s.name, u); ok {
				s.queue.Add(req)
			}
		}
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    route,
		UpdateFunc: func(_, obj any) { route(obj) },
		DeleteFunc: route,
	})
	if err != nil {
		return
	}
	s.children[kind] = true
	context.AfterFunc(s.ctx, func() { _ = informer.RemoveEventHandler(reg) })
}

// instance returns an instance of a kind as the spoke's informer holds it (nil when there is
// none), and whether the kind is watched there and its informer has synced: until then an
// absence means nothing, and the informer's own events bring every instance.
func (s *spoke) instance(kind schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, bool, error) {
	s.mu.Lock()
	kw := s.kinds[kind]
	s.mu.Unlock()
	if kw == nil || !kw.informer.HasSynced() {
		return nil, false, nil
	}
	obj, exists, err := kw.informer.GetStore().GetByKey(storeKey(namespace, name))
	if err != nil || !exists {
		return nil, true, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, true, fmt.Errorf("unexpected %T in the informer of %s", obj, kind)
	}
	return u, true, nil
}
