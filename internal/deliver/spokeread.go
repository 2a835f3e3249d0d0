package deliver

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Reads of a kind go through the spoke cache, which a watch keeps current at no cost per read.
// A kind whose cache has not filled within Options.CacheSyncTimeout is read straight from the API
// server meanwhile. Why it has not decides what follows:
//   - Flotilla may list the kind there (a list of one object answers): the cache is only slow
//     to fill (many or large objects, a busy spoke). It goes on filling, and the kind is read
//     directly until it has (at most cacheBypass): stopping it would throw the list away, and
//     the next read would start it again, never to fill.
//   - it may not (typically: Flotilla may not list or watch it cluster-wide there): the kind
//     is read directly for cacheBypass and its informer is stopped, so one forbidden kind
//     neither stalls deliveries nor retries forever in the background.
const defaultCacheSyncTimeout = 10 * time.Second

const cacheBypass = 10 * time.Minute

// bypassed remembers, per cluster worker, the kinds read without the cache and until when.
type bypassed struct {
	mu    sync.Mutex
	until map[schema.GroupVersionKind]time.Time
	// filling are the kinds whose cache is slow to fill: read directly until it has synced.
	filling map[schema.GroupVersionKind]func() bool
}

func (b *bypassed) active(gvk schema.GroupVersionKind) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if synced, ok := b.filling[gvk]; ok && synced() {
		delete(b.filling, gvk)
		delete(b.until, gvk)
	}
	return time.Now().Before(b.until[gvk])
}

// start reads gvk directly for cacheBypass or, given the HasSynced of its filling cache,
// until that cache has synced (and no longer than cacheBypass).
func (b *bypassed) start(gvk schema.GroupVersionKind, synced func() bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until == nil {
		b.until, b.filling = map[schema.GroupVersionKind]time.Time{}, map[schema.GroupVersionKind]func() bool{}
	}
	b.until[gvk] = time.Now().Add(cacheBypass)
	if synced != nil {
		b.filling[gvk] = synced
	} else {
		delete(b.filling, gvk)
	}
}

// forgetFilling forgets the caches being filled: they were of an engagement that has ended
// (the cluster was engaged anew, with a new cache).
func (b *bypassed) forgetFilling() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for gvk := range b.filling {
		delete(b.filling, gvk)
		delete(b.until, gvk)
	}
}

// readGet reads an object of the spoke. cached says whether the answer came from the cache
// (which holds only Flotilla's objects: NotFound there does not mean absent).
func (w *clusterWorker) readGet(ctx context.Context, cl cluster.Cluster, key client.ObjectKey, obj *unstructured.Unstructured) (cached bool, err error) {
	gvk := obj.GroupVersionKind()
	if !w.bypass.active(gvk) {
		cctx, cancel := context.WithTimeout(ctx, w.d.opts.CacheSyncTimeout)
		err := cl.GetCache().Get(cctx, key, obj)
		cancel()
		if !w.cacheStuck(ctx, cl, gvk, err) {
			return true, err
		}
	}
	return false, cl.GetAPIReader().Get(ctx, key, obj)
}

// readList lists the spoke's objects of a kind matching labels.
func (w *clusterWorker) readList(ctx context.Context, cl cluster.Cluster, list *unstructured.UnstructuredList, labels client.MatchingLabels) error {
	gvk := list.GroupVersionKind()
	gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	if !w.bypass.active(gvk) {
		cctx, cancel := context.WithTimeout(ctx, w.d.opts.CacheSyncTimeout)
		err := cl.GetCache().List(cctx, list, labels)
		cancel()
		if !w.cacheStuck(ctx, cl, gvk, err) {
			return err
		}
	}
	return cl.GetAPIReader().List(ctx, list, labels)
}

// cacheStuck reports whether err means the kind's cache did not sync in time (while the
// delivery itself still has time), and if so switches the kind to direct reads: until its
// cache has filled when Flotilla may list the kind there, for cacheBypass (its informer
// stopped) when it may not.
func (w *clusterWorker) cacheStuck(ctx context.Context, cl cluster.Cluster, gvk schema.GroupVersionKind, err error) bool {
	if err == nil || ctx.Err() != nil || !apierrors.IsTimeout(err) {
		return false
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if listable(ctx, cl, gvk) {
		if inf, ierr := cl.GetCache().GetInformer(ctx, u, cache.BlockUntilSynced(false)); ierr == nil {
			w.bypass.start(gvk, inf.HasSynced)
			w.d.log.Info("Spoke cache for a kind is slow to fill; reading it directly until it has", "cluster", w.name, "kind", gvk.String())
			return true
		}
	}
	w.bypass.start(gvk, nil)
	w.unwatch(gvk) // the informer goes, and its handler with it
	_ = cl.GetCache().RemoveInformer(ctx, u)
	w.d.log.Info("Spoke cache for a kind did not sync; reading it directly for a while (check Flotilla's RBAC there)",
		"cluster", w.name, "kind", gvk.String())
	return true
}

// listable reports whether Flotilla may list the kind's objects across the cluster, as the
// spoke cache's informer does: a list of one object's metadata answers.
func listable(ctx context.Context, cl cluster.Cluster, gvk schema.GroupVersionKind) bool {
	ctx, cancel := context.WithTimeout(ctx, listableTimeout)
	defer cancel()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return cl.GetAPIReader().List(ctx, list, client.Limit(1)) == nil
}

// listableTimeout bounds listable's one request.
const listableTimeout = 10 * time.Second
