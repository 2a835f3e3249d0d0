package propagation

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
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
	switch o := obj.(type) {
	case *flotillav1.Propagation:
		return fromPropagation(o).placementKey()
	case *flotillav1.ClusterPropagation:
		return fromClusterPropagation(o).placementKey()
	}
	return client.ObjectKey{}
}

func (p propagator) deepCopy() propagator {
	switch o := p.obj.(type) {
	case *flotillav1.Propagation:
		return fromPropagation(o.DeepCopy())
	case *flotillav1.ClusterPropagation:
		return fromClusterPropagation(o.DeepCopy())
	}
	panic("unknown propagator type")
}

// defaultAdminNamespace is where ClusterPropagations' Placements live unless the hub is told
// otherwise: the controller's own namespace, which only cluster administrators write to.
const defaultAdminNamespace = "flotilla-system"

// placementRefRefused says why a propagator may not use the Placement it names, or "". A
// ClusterPropagation delivers what only cluster administrators may deliver; whoever may edit
// its Placement steers where that goes, or empties it, so it may use only a Placement in an
// admin namespace. A Propagation always uses a Placement of its own namespace.
func (r *Reconciler) placementRefRefused(p propagator) string {
	if p.kind != kindClusterPropagation {
		return ""
	}
	admin := r.AdminNamespaces
	if len(admin) == 0 {
		admin = []string{defaultAdminNamespace}
	}
	if slices.Contains(admin, p.spec.PlacementRef.Namespace) {
		return ""
	}
	return fmt.Sprintf("placementRef.namespace %q is not an admin namespace (%s): a ClusterPropagation may use only Placements that cluster administrators control; move the Placement, or start the hub with --admin-namespace=%s if only administrators write there",
		p.spec.PlacementRef.Namespace, strings.Join(admin, ", "), p.spec.PlacementRef.Namespace)
}
