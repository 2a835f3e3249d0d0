package deliver

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Reads of a kind go through the spoke cache, which a watch keeps current at no cost per read.
// A kind whose cache cannot fill within cacheSyncTimeout (typically: Flotilla may not list or
// watch it cluster-wide there) is read straight from the API server for cacheBypass instead,
// and its informer is stopped, so one forbidden kind neither stalls deliveries nor retries
// forever in the background.
const (
	cacheSyncTimeout = 10 * time.Second
	cacheBypass      = 10 * time.Minute
)

// bypassed remembers, per cluster worker, the kinds read without the cache and until when.
type bypassed struct {
	mu    sync.Mutex
	until map[schema.GroupVersionKind]time.Time
}

func (b *bypassed) active(gvk schema.GroupVersionKind) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Now().Before(b.until[gvk])
}

func (b *bypassed) start(gvk schema.GroupVersionKind) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until == nil {
		b.until = map[schema.GroupVersionKind]time.Time{}
	}
	b.until[gvk] = time.Now().Add(cacheBypass)
}

// readGet reads an object of the spoke. cached says whether the answer came from the cache
// (which holds only Flotilla's objects: NotFound there does not mean absent).
func (w *clusterWorker) readGet(ctx context.Context, cl cluster.Cluster, key client.ObjectKey, obj *unstructured.Unstructured) (cached bool, err error) {
	gvk := obj.GroupVersionKind()
	if !w.bypass.active(gvk) {
		cctx, cancel := context.WithTimeout(ctx, cacheSyncTimeout)
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
		cctx, cancel := context.WithTimeout(ctx, cacheSyncTimeout)
		err := cl.GetCache().List(cctx, list, labels)
		cancel()
		if !w.cacheStuck(ctx, cl, gvk, err) {
			return err
		}
	}
	return cl.GetAPIReader().List(ctx, list, labels)
}

// cacheStuck reports whether err means the kind's cache did not sync in time (while the
// delivery itself still has time), and if so switches the kind to direct reads.
func (w *clusterWorker) cacheStuck(ctx context.Context, cl cluster.Cluster, gvk schema.GroupVersionKind, err error) bool {
	if err == nil || ctx.Err() != nil || !apierrors.IsTimeout(err) {
		return false
	}
	w.bypass.start(gvk)
	w.unwatch(gvk) // the informer goes, and its handler with it
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	_ = cl.GetCache().RemoveInformer(ctx, u)
	w.d.log.Info("Spoke cache for a kind did not sync; reading it directly for a while (check Flotilla's RBAC there)",
		"cluster", w.name, "kind", gvk.String())
	return true
}
