package propagation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Preview computes what obj (a *Propagation or *ClusterPropagation, stored on the hub or not)
// wants on its clusters, reading the hub through c, with the controller's own steps: its
// fleet-wide holds (guardOf, holds.Planned), and each cluster's objects as package percluster
// makes them (the revision spec.revisionPins pins the cluster to, read back through c with its
// Secrets' values read again from their sources, else the latest; its share of the divided
// workloads; its override rules). A plan shows where a division ends, not the replicas a move
// holds on the way. owners are the kinds Delivery records may belong to (ledger.Trust):
// records of others are not believed. It changes nothing.
func Preview(ctx context.Context, c client.Client, obj client.Object, owners ledger.Owners) (*plan.Desired, error) {
	var p propagator
	switch o := obj.(type) {
	case *flotillav1.Propagation:
		p = fromPropagation(o)
	case *flotillav1.ClusterPropagation:
		p = fromClusterPropagation(o)
	default:
		return nil, fmt.Errorf("%T is not a Propagation or a ClusterPropagation", obj)
	}
	ignore, err := drift.NewIgnoreSet(p.spec.Strategy.IgnoreFields)
	if err != nil {
		return nil, fmt.Errorf("spec.strategy.%w", err)
	}
	owner := p.owner()
	d := &plan.Desired{Owner: owner, Ignore: ignore, Prune: true}
	placement, err := ownerpass.PlacementOf(ctx, c, p.placementKey())
	if err != nil {
		return nil, err
	}
	guard := guardOf(p, placement)
	if placement == nil {
		d.Holds = []string{holds.Check(guard).Message}
		return d, nil
	}
	hubObjects, _, err := hubSelector{hub: c, secrets: c}.selectObjects(ctx, p)
	if err != nil {
		return nil, err
	}
	rendered := make([]*unstructured.Unstructured, 0, len(hubObjects))
	for _, o := range hubObjects {
		r, err := render.Render(o, owner)
		if err != nil {
			return nil, err
		}
		rendered = append(rendered, r)
	}
	render.Sort(rendered)
	revision := render.Revision(rendered)
	d.Strategy = strategyOf(p, revision)
	if d.Prune = prunes(p, rendered); !d.Prune {
		d.Holds = append(d.Holds, nothingSelected)
	}
	pass := ownerpass.Pass{Owner: p.ledgerOwner(), Placement: placement, Objects: rendered, Revision: revision,
		Pins: p.spec.RevisionPins, Approved: p.obj.GetAnnotations()[flotillav1.AnnotationApprove], Undo: p.obj.GetAnnotations()[flotillav1.AnnotationUndo],
		Rules: override.Compile(p.spec.Overrides), Guard: guard}
	if err := ownerpass.Plan(ctx, c, &ledger.Ledger{Hub: c, Owners: owners}, pass, d); err != nil {
		return nil, err
	}
	return d, nil
}
