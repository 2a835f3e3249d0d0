package deliver

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

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

// serverFormOf returns what the cluster stores for desired: learnt before, or asked now by a dry
// run of toApply (desired with the live values of ignored fields) and remembered.
func (w *clusterWorker) serverFormOf(ctx context.Context, cl cluster.Cluster, owner pairKey, key string, desired, toApply *unstructured.Unstructured, ignore [][]string) (map[string]any, error) {
	if form, ok := w.knownForm(key, desired); ok {
		return form, nil
	}
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
