package deliver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// watchScope is a worker's spoke event handlers on one engaged instance of its cluster. Its
// context ends with the engagement (multicluster-runtime's lifecycle: the spoke disengaged or
// engaged again with new caches) or with the worker (retired), and each handler is removed
// from its informer then, so handlers never pile up with re-engagements.
type watchScope struct {
	e     *engagement
	ctx   context.Context
	kinds map[schema.GroupVersionKind]context.CancelFunc // removes the kind's handler
}

// watch makes sure changes to Flotilla's objects of a kind on the engaged instance reach
// onSpokeChange. The handler is registered before the delivery reads anything of the kind, so
// no change made after the read goes unseen. The spoke cache holds only Flotilla-managed
// objects, without managedFields, so the watch costs the memory of those objects and nothing
// per event beyond a comparison.
//
// multicluster-runtime's Kind source is not used here, although its engagement lifecycle is:
// it registers its handler only once the kind's informer has synced (leaving a moment between
// a delivery's read and the watch in which a change on the spoke would go unseen), and it waits
// for the whole spoke cache to sync, which a kind Flotilla may not list there never does.
func (w *clusterWorker) watch(e *engagement, gvk schema.GroupVersionKind) {
	w.mu.Lock()
	scope := w.watchScopeLocked(e)
	done := scope == nil || scope.kinds[gvk] != nil || w.bypass.active(gvk)
	var ctx context.Context
	if !done {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(scope.ctx)
		scope.kinds[gvk] = cancel
	}
	w.mu.Unlock()
	if done {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	// Not waiting for the sync: a kind Flotilla may not watch there never syncs, and reads
	// find that out on their own (spokeread.go).
	inf, err := e.cl.GetCache().GetInformer(ctx, u, cache.BlockUntilSynced(false))
	var reg toolscache.ResourceEventHandlerRegistration
	if err == nil {
		reg, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) { w.onSpokeChange(obj, false) },
			DeleteFunc: func(obj any) {
				if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = tomb.Obj
				}
				w.onSpokeChange(obj, true)
			},
		})
	}
	if err == nil {
		context.AfterFunc(ctx, func() { _ = inf.RemoveEventHandler(reg) })
		return
	}
	// Deliveries still work through direct reads; periodic verification stands in.
	w.d.log.V(1).Info("Cannot watch a kind on the spoke; drift is found by periodic verification only",
		"cluster", w.name, "kind", gvk.String(), "error", err.Error())
	w.unwatch(gvk)
}

// watchScopeLocked returns the worker's handlers on engagement e, starting them anew when e
// is not the instance they are on; nil when e is no longer the engaged instance (a delivery
// that started before the cluster was engaged again watches nothing).
func (w *clusterWorker) watchScopeLocked(e *engagement) *watchScope {
	if w.watches != nil && w.watches.e == e && w.watches.ctx.Err() == nil {
		return w.watches
	}
	if e.ctx.Err() != nil || w.ctx.Err() != nil {
		return nil
	}
	w.bypass.forgetFilling() // those were the previous instance's caches
	ctx, cancel := context.WithCancel(e.ctx)
	stop := context.AfterFunc(w.ctx, cancel)
	context.AfterFunc(ctx, func() { stop() }) // a scope replaced lets go of the worker's context
	w.watches = &watchScope{e: e, ctx: ctx, kinds: map[schema.GroupVersionKind]context.CancelFunc{}}
	return w.watches
}

// unwatch removes the worker's handler of a kind, if it has one.
func (w *clusterWorker) unwatch(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	var cancel context.CancelFunc
	if w.watches != nil {
		cancel = w.watches.kinds[gvk]
		delete(w.watches.kinds, gvk)
	}
	w.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// onSpokeChange looks at a changed or deleted Flotilla object on the spoke: when observation
// says it needs another look (it no longer holds what was applied, or its readiness changed),
// its owner is queued, at once or when the object's correction backoff ends; the delivery then
// corrects or reports it, as the owner's strategy says.
func (w *clusterWorker) onSpokeChange(obj any, deleted bool) {
	live, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	owner, ok := render.ParseOwner(live.GetAnnotations()[flotillav1.AnnotationOwner])
	if !ok {
		return
	}
	key := render.Key(live)
	w.mu.Lock()
	desired := w.desiredLocked(owner, key)
	ignore := w.jobs[owner].Ignore
	w.mu.Unlock()
	if desired == nil {
		return // not delivered, or no longer wanted: the delivery in flight decides
	}
	look, wait, drifted := w.seen.Changed(owner, key, desired, live, deleted, decide.IgnoredFields(ignore, desired, live))
	if !look {
		return
	}
	driftEvents.WithLabelValues(w.name).Inc()
	if drifted {
		w.drifts.detected(owner, key, time.Now())
	}
	if wait > 0 {
		w.queue.AddAfter(owner, wait)
		return
	}
	w.queue.Add(owner)
}

// wanted tells observation whether owner still delivers the object with this key, and with
// which hash.
func (w *clusterWorker) wanted(owner render.Owner, key string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.desiredLocked(owner, key); d != nil {
		return render.HashOf(d), true
	}
	return "", false
}

// desiredLocked returns the desired object of owner with this key (from its job's identities,
// shared with the other clusters that get the same objects).
func (w *clusterWorker) desiredLocked(owner pairKey, key string) *unstructured.Unstructured {
	job, ok := w.jobs[owner]
	if !ok {
		return nil
	}
	return job.identities().object(key)
}
