package owners

import (
	"context"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// Registry is the set of known owners, safe for concurrent use. The zero value is not usable:
// call New.
type Registry struct {
	mu      sync.RWMutex
	byValue map[string]scope
	synced  []toolscache.InformerSynced
}

// scope is where a known owner's objects may be: on every cluster or on its own (an owner on a
// spoke), in every namespace or in its own.
type scope struct {
	cluster   string // empty: every cluster
	namespace string // empty: every namespace
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{byValue: map[string]scope{}}
}

// Add makes an owner known. A namespaced owner's objects are expected in its namespace only,
// unless anywhere (a fleet API instance whose graph is cluster-wide).
func (r *Registry) Add(o render.Owner, anywhere bool) {
	s := scope{cluster: o.Cluster, namespace: o.Namespace}
	if anywhere {
		s.namespace = ""
	}
	v := o.LabelValue()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byValue[v] = s
}

// Remove forgets an owner.
func (r *Registry) Remove(o render.Owner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byValue, o.LabelValue())
}

// Keeps reports whether an object on cluster, in namespace (empty: cluster-scoped), carrying
// this owner label value belongs where a known owner delivers.
func (r *Registry) Keeps(cluster, value, namespace string) bool {
	if value == "" {
		return false
	}
	r.mu.RLock()
	s, ok := r.byValue[value]
	r.mu.RUnlock()
	return ok && (s.cluster == "" || s.cluster == cluster) && (s.namespace == "" || s.namespace == namespace)
}

// Len is the number of known owners.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byValue)
}

// AddSource registers a feed of the registry that must have delivered its initial list before
// spokes are engaged.
func (r *Registry) AddSource(hasSynced toolscache.InformerSynced) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced = append(r.synced, hasSynced)
}

// WaitSynced waits until every source has synced, or ctx ends (false).
func (r *Registry) WaitSynced(ctx context.Context) bool {
	r.mu.RLock()
	synced := append([]toolscache.InformerSynced(nil), r.synced...)
	r.mu.RUnlock()
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

// Feed is an informer event handler that keeps the registry current with the owners an
// informer's objects are: ownerOf names the owner of an object and says whether it is one now
// (a transparent-mode object stops being one when it loses its label); anywhere as in Add.
func (r *Registry) Feed(anywhere bool, ownerOf func(obj any) (render.Owner, bool)) toolscache.ResourceEventHandler {
	update := func(obj any) {
		if o, ok := ownerOf(obj); ok {
			r.Add(o, anywhere)
		} else if o.Name != "" {
			r.Remove(o)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, _ := ownerOf(obj); o.Name != "" {
				r.Remove(o)
			}
		},
	}
}
