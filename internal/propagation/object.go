package propagation

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Kinds of owners.
const (
	kindPropagation        = "Propagation"
	kindClusterPropagation = "ClusterPropagation"
)

// propagator is what the reconciler needs of a Propagation or a ClusterPropagation.
type propagator struct {
	obj    client.Object
	spec   *flotillav1.PropagationSpec
	status *flotillav1.PropagationStatus
	kind   string
}

func fromPropagation(p *flotillav1.Propagation) propagator {
	return propagator{obj: p, spec: &p.Spec, status: &p.Status, kind: kindPropagation}
}

func fromClusterPropagation(p *flotillav1.ClusterPropagation) propagator {
	return propagator{obj: p, spec: &p.Spec, status: &p.Status, kind: kindClusterPropagation}
}

func (p propagator) owner() render.Owner {
	return render.Owner{Kind: p.kind, Namespace: p.obj.GetNamespace(), Name: p.obj.GetName()}
}

// placementKey is where the Placement lives: a Propagation's own namespace, or the namespace a
// ClusterPropagation names.
func (p propagator) placementKey() client.ObjectKey {
	ns := p.obj.GetNamespace()
	if p.kind == kindClusterPropagation {
		ns = p.spec.PlacementRef.Namespace
	}
	return client.ObjectKey{Namespace: ns, Name: p.spec.PlacementRef.Name}
}

// PlacementOf is the Placement a Propagation or a ClusterPropagation uses (spec.placementRef);
// any other object uses none.
func PlacementOf(obj client.Object) client.ObjectKey {
	if p, ok := asPropagator(obj); ok {
		return p.placementKey()
	}
	return client.ObjectKey{}
}

// asPropagator is obj as a propagator, if it is a *Propagation or a *ClusterPropagation.
func asPropagator(obj client.Object) (propagator, bool) {
	switch o := obj.(type) {
	case *flotillav1.Propagation:
		return fromPropagation(o), true
	case *flotillav1.ClusterPropagation:
		return fromClusterPropagation(o), true
	}
	return propagator{}, false
}

func (p propagator) deepCopy() propagator {
	c, _ := asPropagator(p.obj.DeepCopyObject().(client.Object))
	return c
}

// placementRefRefused says why a propagator may not use the Placement it names, or "": a
// ClusterPropagation only a Placement in an admin namespace, a Propagation always its own
// namespace's.
func (r *Reconciler) placementRefRefused(p propagator) string {
	if p.kind != kindClusterPropagation {
		return ""
	}
	return ownerkinds.AdminPlacement("a ClusterPropagation", p.spec.PlacementRef.Namespace, r.AdminNamespaces)
}

// ledgerOwner is the propagator as the owner of Delivery records.
func (p propagator) ledgerOwner() ledger.Owner {
	return ledger.Owner{Owner: p.owner(), APIVersion: flotillav1.GroupVersion.String(), ObjectKind: p.kind, UID: p.obj.GetUID(),
		Placement: p.placementKey()}
}
