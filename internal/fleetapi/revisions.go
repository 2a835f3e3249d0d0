package fleetapi

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// rgdRevision is one revision of an RGD: the spec it was, and the name it is kept under ("" when
// the RGD is served without history).
type rgdRevision struct {
	name string
	rgd  *kro.ResourceGraphDefinition
}

// revisionObject is what a revision keeps of an RGD (its identity, generation, labels,
// annotations and spec; not its status), and its hash: the spec's alone, so a spec changed
// back is the revision it was.
func revisionObject(rgd *kro.ResourceGraphDefinition) (*unstructured.Unstructured, string, error) {
	kept := &kro.ResourceGraphDefinition{Spec: rgd.Spec}
	kept.SetGroupVersionKind(kro.GroupVersion.WithKind(rgdKind))
	kept.Name, kept.UID, kept.Generation = rgd.Name, rgd.UID, rgd.Generation
	kept.Labels, kept.Annotations = rgd.Labels, rgd.Annotations
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(kept)
	if err != nil {
		return nil, "", fmt.Errorf("revision of %s: %w", rgd.Name, err)
	}
	spec := &unstructured.Unstructured{Object: map[string]any{"spec": obj["spec"]}}
	hash, err := render.Hash(spec)
	if err != nil {
		return nil, "", err
	}
	return &unstructured.Unstructured{Object: obj}, hash, nil
}

// revisionsInUse are the revisions the history must not prune besides the pins (Pass.Pins): those
// the clusters serve, and for a cluster whose CRD cannot be read (it is not connected) the one it
// was last seen serving, or, not seen since the controller started, every kept one, since it may
// serve any of them and its instances are expanded with what it serves.
func (r *Reconciler) revisionsInUse(ctx context.Context, owner render.Owner, reads map[string]clusterRead) (map[string]bool, error) {
	keep := map[string]bool{}
	unread := false
	for c, read := range reads {
		served, known := read.plan.served, !read.plan.unread
		if known {
			r.lastServed.set(owner.Name, c, served)
		} else {
			served, known = r.lastServed.get(owner.Name, c)
		}
		if served != "" {
			keep[served] = true
		}
		unread = unread || !known
	}
	if unread && r.Revisions != nil {
		kept, err := r.Revisions.List(ctx, owner)
		if err != nil {
			return nil, err
		}
		for _, k := range kept {
			keep[k.Name] = true
		}
	}
	return keep, nil
}

// loadRevision reads a kept revision of the RGD back.
func (r *Reconciler) loadRevision(ctx context.Context, owner render.Owner, name string) (rgdRevision, error) {
	if r.Revisions == nil {
		return rgdRevision{}, fmt.Errorf("revision %s: the controller keeps no revisions", name)
	}
	objs, _, err := r.Revisions.Load(ctx, owner, name)
	if err != nil {
		return rgdRevision{}, err
	}
	if len(objs) != 1 {
		return rgdRevision{}, fmt.Errorf("revision %s holds %d objects, not one ResourceGraphDefinition", name, len(objs))
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, rgd); err != nil {
		return rgdRevision{}, fmt.Errorf("revision %s: %w", name, err)
	}
	return rgdRevision{name: name, rgd: rgd}, nil
}

// servedRevision is the revision a CRD this owner delivered was compiled from, once it is
// Established; "" otherwise, or when it was delivered without history.
func servedRevision(crd *unstructured.Unstructured, owner render.Owner) string {
	if servedGeneration(crd, owner) == 0 {
		return ""
	}
	return crd.GetAnnotations()[flotillav1.AnnotationAPIRevision]
}

// rgdMemo remembers values per RGD, by key: what a pass needs of the passes before it that
// nothing on the hub says. Memory only; Gone forgets an RGD's.
type rgdMemo struct {
	mu    sync.Mutex
	byRGD map[string]map[string]string
}

func (m *rgdMemo) set(rgd, key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byRGD == nil {
		m.byRGD = map[string]map[string]string{}
	}
	if m.byRGD[rgd] == nil {
		m.byRGD[rgd] = map[string]string{}
	}
	m.byRGD[rgd][key] = value
}

func (m *rgdMemo) get(rgd, key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	value, ok := m.byRGD[rgd][key]
	return value, ok
}

// replace makes all what is remembered of an RGD.
func (m *rgdMemo) replace(rgd string, all map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byRGD == nil {
		m.byRGD = map[string]map[string]string{}
	}
	m.byRGD[rgd] = all
}

// forget drops what is remembered of an RGD.
func (m *rgdMemo) forget(rgd string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byRGD, rgd)
}

// pinsOf are the revisions placer pins rgd's clusters to.
func pinsOf(placer *flotillav1.APIPropagation, rgd string) []flotillav1.RevisionPin {
	var out []flotillav1.RevisionPin
	for _, p := range placer.Spec.RevisionPins {
		if p.ResourceGraphDefinition == rgd {
			out = append(out, flotillav1.RevisionPin{Cluster: p.Cluster, Revision: p.Revision})
		}
	}
	return out
}
