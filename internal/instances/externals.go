package instances

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/flotilla-dev/flotilla/internal/kro"
)

// External references are read, never written, and name objects Flotilla did not deliver, which
// the spoke cache does not hold. They are read from watches shared by every instance on the
// spoke that refers to the same kind in the same namespace, counted by the instances using
// them: a watch starts with its first user and stops with its last. A change there evaluates
// its users again. Under the default tenancy a reference must be in the instance's own
// namespace (cacheObserver.confine): Flotilla reads with its own identity, which may read
// anything.

// externalKey is one shared watch: a kind in a namespace.
type externalKey struct {
	kind      schema.GroupVersionKind
	namespace string
}

// externalWatch is the informer of one externalKey and the instances using it.
type externalWatch struct {
	informer toolscache.SharedIndexInformer
	stop     context.CancelFunc
	users    map[Instance]bool
}

// externalKinds are the kinds of a graph's external references.
func externalKinds(c *kro.Compiled) map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, n := range c.Nodes() {
		if n.Type == kro.NodeExternal || n.Type == kro.NodeExternalCollection {
			out[n.Kind] = true
		}
	}
	return out
}

// external returns the synced watch of a kind in a namespace for inst, starting it if none
// runs; resource is the kind's. inst is one of its users from then on, before its pass reads
// anything (useExternals settles the set after the pass): a change while the pass runs queues
// it again.
func (c *Controller) external(ctx context.Context, s *spoke, inst Instance, key externalKey, resource schema.GroupVersionResource) (*externalWatch, error) {
	s.mu.Lock()
	w := s.externals[key]
	if w == nil {
		informer := dynamicinformer.NewFilteredDynamicInformer(s.dyn, resource, key.namespace, 0, toolscache.Indexers{}, nil).Informer()
		_ = informer.SetTransform(cache.TransformStripManagedFields())
		wctx, stop := context.WithCancel(s.ctx)
		w = &externalWatch{informer: informer, stop: stop, users: map[Instance]bool{}}
		changed := func(any) {
			s.mu.Lock()
			users := make([]Instance, 0, len(w.users))
			for inst := range w.users {
				users = append(users, inst)
			}
			s.mu.Unlock()
			for _, inst := range users {
				s.enqueue(inst.Kind, inst.Namespace, inst.Name)
			}
		}
		_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: changed, UpdateFunc: func(_, obj any) { changed(obj) }, DeleteFunc: changed,
		})
		s.externals[key] = w
		go informer.RunWithContext(wctx)
	}
	s.mu.Unlock()
	if !toolscache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
		return nil, fmt.Errorf("watch %s in namespace %q on the spoke did not sync", key.kind.Kind, key.namespace)
	}
	// A user from the sync on: what the first list holds, the pass reads.
	s.mu.Lock()
	if s.externals[key] == w {
		w.users[inst] = true
	}
	s.mu.Unlock()
	return w, nil
}

// useExternals records the external watches an instance used in its latest pass, and stops
// those no instance uses any more.
func (s *spoke) useExternals(inst Instance, used map[externalKey]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useExternalsLocked(inst, used)
}

func (s *spoke) useExternalsLocked(inst Instance, used map[externalKey]bool) {
	for key, w := range s.externals {
		switch {
		case used[key]:
			w.users[inst] = true
		case w.users[inst]:
			delete(w.users, inst)
			if len(w.users) == 0 {
				w.stop()
				delete(s.externals, key)
			}
		}
	}
}

// readExternal answers a query from a shared watch.
func readExternal(w *externalWatch, q kro.Query) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range w.informer.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || (q.Name != "" && u.GetName() != q.Name) {
			continue
		}
		if q.Selector != nil && !q.Selector.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		out = append(out, u.DeepCopy())
	}
	return out
}
