package deliver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Identities are what a delivery learns of its job's objects from the objects alone: each
// one's kind, key, hash and phase, the kinds among them, and where each key stands. They are
// the same on every cluster the same objects go to, and a pass of an owner with no division and
// no overrides sends one slice of objects to all its clusters: made once for that slice
// (NewIdentities, shared by the jobs), on first use, they cost one walk of a thousand objects
// per hub edit instead of one per cluster (package fanout shares them; a job without them gets
// its own).
type Identities struct {
	objs []*unstructured.Unstructured
	once sync.Once

	ids      []objectID
	observed []observe.Object // ids as package observe names them
	kinds    []schema.GroupVersionKind
	at       map[string]int // render.Key → the object's position
}

// NewIdentities returns the identities of objs, made on first use. objs must not change
// afterwards (a pass's slices never do).
func NewIdentities(objs []*unstructured.Unstructured) *Identities {
	return &Identities{objs: objs}
}

// withIdentities is the job with identities of its own objects: those it was given when they
// are, new ones (made on first use) otherwise. A worker keeps its jobs so.
func (j Job) withIdentities() Job {
	if !j.Identities.of(j.Objects) {
		j.Identities = NewIdentities(j.Objects)
	}
	return j
}

// identities are the job's objects' identities, made on first use.
func (j Job) identities() *Identities {
	return j.withIdentities().Identities.made()
}

// of reports whether these are the identities of objs: the same slice (render.SliceID).
func (i *Identities) of(objs []*unstructured.Unstructured) bool {
	return i != nil && render.IDOf(i.objs) == render.IDOf(objs)
}

// made returns the identities, making them on first use.
func (i *Identities) made() *Identities {
	i.once.Do(func() {
		i.ids = identify(i.objs)
		i.kinds = kindsOf(i.ids)
		i.observed = make([]observe.Object, len(i.ids))
		i.at = make(map[string]int, len(i.ids))
		for n, id := range i.ids {
			i.observed[n] = observe.Object{Key: id.key, Hash: id.hash}
			i.at[id.key] = n
		}
	})
	return i
}

// wants reports whether one of the objects has that key.
func (i *Identities) wants(key string) bool {
	_, ok := i.made().at[key]
	return ok
}

// object returns the object with that key, nil when none has it.
func (i *Identities) object(key string) *unstructured.Unstructured {
	n, ok := i.made().at[key]
	if !ok {
		return nil
	}
	return i.objs[n]
}

// objectID is what a delivery needs to know of an object again and again.
type objectID struct {
	gvk   schema.GroupVersionKind
	key   string // render.Key
	hash  string // the hash annotation
	phase int    // render.Phase
}

// identify computes each object's objectID, reading each object's kind once (the objects lie
// scattered in memory, and each walk costs a cache miss or more per object).
func identify(objs []*unstructured.Unstructured) []objectID {
	ids := make([]objectID, len(objs))
	for i, o := range objs {
		gvk := o.GroupVersionKind()
		ids[i] = objectID{gvk: gvk, key: render.KeyWith(gvk, o), hash: render.HashOf(o), phase: render.PhaseOf(gvk)}
	}
	return ids
}

// kindsOf returns the distinct kinds of a delivery's objects, in the order they first appear;
// an object without a version or kind names none (its apply fails on its own).
func kindsOf(ids []objectID) []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, id := range ids {
		if id.gvk.Version != "" && id.gvk.Kind != "" && !seen[id.gvk] {
			seen[id.gvk] = true
			kinds = append(kinds, id.gvk)
		}
	}
	return kinds
}
