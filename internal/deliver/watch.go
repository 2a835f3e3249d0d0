package deliver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// watchKey is one kind's informer on one engaged cluster: a cluster that is engaged again
// (new credentials) has a new cache and needs its handlers again.
type watchKey struct {
	cl  cluster.Cluster
	gvk schema.GroupVersionKind
}

// watch makes sure changes to Flotilla's objects of a kind on the cluster reach onSpokeChange.
// The spoke cache holds only Flotilla-managed objects, without managedFields, so the watch
// costs the memory of those objects and nothing per event beyond a comparison.
func (w *clusterWorker) watch(ctx context.Context, cl cluster.Cluster, gvk schema.GroupVersionKind) {
	if !w.watchInstance(ctx, cl) {
		return
	}
	key := watchKey{cl: cl, gvk: gvk}
	w.mu.Lock()
	done := w.watching[key] || w.bypass.active(gvk)
	if !done {
		if w.watching == nil {
			w.watching = map[watchKey]bool{}
		}
		w.watching[key] = true
	}
	w.mu.Unlock()
	if done {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	// Not waiting for the sync: a kind Flotilla may not watch there never syncs, and reads
	// find that out on their own (spokeread.go).
	inf, err := cl.GetCache().GetInformer(ctx, u, cache.BlockUntilSynced(false))
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
		remove := func() { _ = inf.RemoveEventHandler(reg) }
		w.mu.Lock()
		current := w.watchedCluster == cl
		if current {
			w.unwatch = append(w.unwatch, remove)
		}
		w.mu.Unlock()
		if !current {
			remove() // the cluster was engaged again meanwhile
		}
	}
	if err != nil {
		// Deliveries still work through direct reads; periodic verification stands in.
		w.d.log.V(1).Info("Cannot watch a kind on the spoke; drift is found by periodic verification only",
			"cluster", w.name, "kind", gvk.String(), "error", err.Error())
		w.mu.Lock()
		delete(w.watching, key)
		w.mu.Unlock()
	}
}

// watchInstance makes cl the cluster instance whose informers carry this worker's handlers,
// and reports whether it is the engaged one. A cluster engaged again (new credentials, back
// from an outage) is a new instance with new caches: the records and handlers kept for the
// old one are dropped then, so they do not pile up with every re-engagement. A delivery that
// still holds an older instance than the engaged one watches nothing.
func (w *clusterWorker) watchInstance(ctx context.Context, cl cluster.Cluster) bool {
	w.mu.Lock()
	same := w.watchedCluster == cl
	w.mu.Unlock()
	if same {
		return true
	}
	if current, err := w.d.clusters.Get(ctx, multicluster.ClusterName(w.name)); err != nil || current != cl {
		return false
	}
	w.mu.Lock()
	if w.watchedCluster == cl {
		w.mu.Unlock()
		return true
	}
	old := w.unwatch
	w.watchedCluster, w.watching, w.unwatch = cl, nil, nil
	w.mu.Unlock()
	for _, remove := range old {
		remove()
	}
	return true
}

// onSpokeChange looks at a changed or deleted Flotilla object on the spoke. When it no longer
// holds what was applied (or was ready and is not any more), the object is marked dirty and
// its owner queued: the delivery then corrects or reports it, as the owner's strategy says.
// Changes made by Flotilla itself compare equal and cost nothing more. A drift that undoes a
// recent correction queues the owner only when the object's backoff ends (fight.go).
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
	v := w.verified[owner]
	desired := w.desiredLocked(owner, key)
	if desired == nil || !v.known(key) {
		w.mu.Unlock() // not delivered yet, or no longer wanted: the delivery in flight decides
		return
	}
	job := w.jobs[owner]
	drifted := deleted
	if !deleted {
		var changed bool
		if changed, drifted = w.changedLocked(job, desired, live, v, key); !changed {
			w.mu.Unlock()
			return
		}
	}
	var wait time.Duration
	var started bool
	if drifted {
		wait, started = w.undoneLocked(key, hashOf(desired), time.Now())
	}
	if w.dirty == nil {
		w.dirty = map[pairKey]map[string]bool{}
	}
	if w.dirty[owner] == nil {
		w.dirty[owner] = map[string]bool{}
	}
	w.dirty[owner][key] = true
	delete(w.applied, key)
	w.mu.Unlock()
	driftEvents.WithLabelValues(w.name).Inc()
	if wait > 0 && !started {
		w.queue.AddAfter(owner, wait)
		return
	}
	w.queue.Add(owner) // a fight that starts is reported at once
}

// changedLocked reports whether a live object needs another look: it differs from what
// Flotilla's apply stores in a way not already recorded, or its readiness changed; drifted
// says it differs.
func (w *clusterWorker) changedLocked(job Job, desired, live *unstructured.Unstructured, v *verified, key string) (changed, drifted bool) {
	paths := drift.Compare(w.expectedLocked(key, desired), live.Object, job.Ignore.For(desired.GetAPIVersion(), desired.GetKind()))
	if recorded, ok := v.drifted[key]; ok {
		return !equalStrings(recorded.Fields, paths), paths != nil
	}
	if paths != nil {
		return true, true
	}
	// Readiness follows the watch too: an object that became ready, or stopped being ready,
	// is looked at again now rather than at the next periodic recheck.
	res, err := status.Compute(live)
	return (err == nil && res.Status == status.CurrentStatus) != v.ready[key], false
}

// desiredLocked returns the desired object of owner with this key, indexing the owner's job
// on first use.
func (w *clusterWorker) desiredLocked(owner pairKey, key string) *unstructured.Unstructured {
	idx, ok := w.index[owner]
	if !ok {
		job, ok := w.jobs[owner]
		if !ok {
			return nil
		}
		idx = make(map[string]*unstructured.Unstructured, len(job.Objects))
		for _, o := range job.Objects {
			idx[render.Key(o)] = o
		}
		if w.index == nil {
			w.index = map[pairKey]map[string]*unstructured.Unstructured{}
		}
		w.index[owner] = idx
	}
	return idx[key]
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
