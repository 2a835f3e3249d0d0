package deliver

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
)

// serverForm is what a cluster stores when Flotilla applies one desired object, limited to the
// fields that object sets. It differs from the desired object where admission (a mutating
// webhook or admission policy) or the API server itself changes a field Flotilla sends: an
// object holding the server form is as Flotilla applied it, and applying again would store the
// same, so it is not drift and is not written.
//
// A form is learnt by a dry run the first time an object of a given desired hash looks drifted,
// and kept until the hash changes: nothing is read on the apply path, where a bulk delivery
// would decode a thousand answers per cluster to find, nearly always, the desired object again.
type serverForm struct {
	owner  pairKey
	hash   string         // the desired object's hash
	object map[string]any // nil when the server stores the desired object as it is
}

// driftMemory is what a worker remembers of objects that looked drifted: their server forms and
// their correction histories (fight.go), by render.Key. Guarded by the worker's mu.
type driftMemory struct {
	forms   map[string]serverForm
	sweepAt int // sweep forms of owners gone when there are this many
	fights  map[string]*fight
}

// minFormSweep is the fewest forms worth a sweep.
const minFormSweep = 64

// expectedLocked returns what a live object must hold where desired sets something: the
// server form of desired when it differs, else desired itself.
func (w *clusterWorker) expectedLocked(key string, desired *unstructured.Unstructured) map[string]any {
	if f, ok := w.memory.forms[key]; ok && f.object != nil && f.hash == hashOf(desired) {
		return f.object
	}
	return desired.Object
}

// knownForm returns the server form of the desired object with this key and hash, if learnt.
func (w *clusterWorker) knownForm(key string, desired *unstructured.Unstructured) (map[string]any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, ok := w.memory.forms[key]
	if !ok || f.hash != hashOf(desired) {
		return nil, false
	}
	if f.object == nil {
		return desired.Object, true
	}
	return f.object, true
}

// recheck is for a live object that differs at paths from what Flotilla applied, compared
// with the desired object because what the cluster stores for it is not known yet: it asks the
// cluster by a dry run, remembers the answer, and returns where the object differs from that.
// A correction also needs the field manager behind the drift (nameManager): it is read during
// the dry run, so that learning the server form costs a correction no time.
func (w *clusterWorker) recheck(ctx context.Context, cl cluster.Cluster, owner pairKey, key string, desired, live *unstructured.Unstructured,
	ignore [][]string, paths []string, nameManager bool) (drifted []string, manager string) {
	if _, ok := w.knownForm(key, desired); ok {
		return paths, "" // already compared with it
	}
	var wg sync.WaitGroup
	if nameManager {
		wg.Add(1)
		go func() {
			defer wg.Done()
			manager = w.managerOf(ctx, cl, desired, paths)
		}()
	}
	form, err := w.learnForm(ctx, cl, owner, key, desired, keepIgnored(desired, live, ignore), ignore)
	wg.Wait()
	if err != nil {
		ctrllog.FromContext(ctx).V(1).Info("Cannot dry-run an apply to tell drift from the cluster's own changes",
			"object", decide.Describe(desired), "error", err.Error())
		return paths, manager
	}
	return drift.Compare(form, live.Object, ignore), manager
}

// learnForm asks the cluster what it would store for desired, by a dry run of toApply
// (desired with the live values of ignored fields), and remembers it.
func (w *clusterWorker) learnForm(ctx context.Context, cl cluster.Cluster, owner pairKey, key string, desired, toApply *unstructured.Unstructured, ignore [][]string) (map[string]any, error) {
	applier, err := w.appliers.get(cl)
	if err != nil {
		return nil, err
	}
	raw, err := applier.wouldStore(ctx, toApply)
	countWrite(w.name, "dry-run", err)
	if err != nil {
		return nil, err
	}
	var stored map[string]any
	if err := utiljson.Unmarshal(raw, &stored); err != nil {
		return nil, err
	}
	f := serverForm{owner: owner, hash: hashOf(desired)}
	form := desired.Object
	if drift.Compare(desired.Object, stored, ignore) != nil {
		f.object = drift.Project(desired.Object, stored)
		form = f.object
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.memory.forms == nil {
		w.memory.forms = map[string]serverForm{}
	}
	w.memory.forms[key] = f
	if len(w.memory.forms) >= max(w.memory.sweepAt, minFormSweep) {
		w.sweepFormsLocked()
	}
	return form, nil
}

// sweepFormsLocked forgets the forms of objects no longer delivered here, and sets when the
// next sweep is due, so memory follows what is delivered at a constant cost per form learnt.
func (w *clusterWorker) sweepFormsLocked() {
	for key, f := range w.memory.forms {
		if d := w.desiredLocked(f.owner, key); d == nil || hashOf(d) != f.hash {
			delete(w.memory.forms, key)
		}
	}
	w.memory.sweepAt = 2 * len(w.memory.forms)
}
