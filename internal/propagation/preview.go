package propagation

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/plan"
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
	p, ok := asPropagator(obj)
	if !ok {
		return nil, fmt.Errorf("%T is not a Propagation or a ClusterPropagation", obj)
	}
	d := &plan.Desired{Owner: p.owner(), Prune: true}
	placement, err := ownerpass.PlacementOf(ctx, c, p.placementKey())
	if err != nil {
		return nil, err
	}
	if placement == nil {
		d.Holds = []string{holds.Check(guardOf(p, placement)).Message}
		return d, nil
	}
	pass, err := hubSelector{hub: c, secrets: c}.pass(ctx, newRenderCache(), &override.Cache{}, p, placement)
	if err != nil {
		return nil, err
	}
	d.Strategy, d.Ignore, d.Prune = pass.Strategy, pass.Ignore, pass.Prune
	if !d.Prune {
		d.Holds = append(d.Holds, nothingSelected)
	}
	if err := ownerpass.Plan(ctx, c, &ledger.Ledger{Hub: c, Owners: owners}, pass, d); err != nil {
		return nil, err
	}
	return d, nil
}
