package propagation

import (
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

func (p propagator) deepCopy() propagator {
	switch o := p.obj.(type) {
	case *flotillav1.Propagation:
		return fromPropagation(o.DeepCopy())
	case *flotillav1.ClusterPropagation:
		return fromClusterPropagation(o.DeepCopy())
	}
	panic("unknown propagator type")
}
