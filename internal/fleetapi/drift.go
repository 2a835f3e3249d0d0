package fleetapi

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// RecordDrift emits the Event of a drift of an RGD's CRD (ownerkinds.DriftEvents) on the
// APIPropagation serving the RGD, not on kro's RGD.
func (r *Reconciler) RecordDrift(owner render.Owner, cluster string, d deliver.Drift) {
	r.drift.Record(owner, cluster, d)
}

// servingPropagation reads the APIPropagation that serves the RGD an owner names (placerOf), from
// the hub cache.
func (r *Reconciler) servingPropagation(ctx context.Context, owner render.Owner) (client.Object, error) {
	rgd := &kro.ResourceGraphDefinition{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: owner.Name}, rgd); err != nil {
		return nil, err
	}
	p, err := ServedBy(ctx, r.Hub, rgd)
	if p == nil {
		return nil, err // none: no Event
	}
	return p, nil
}
