package fleetapi

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// RecordDrift emits an Event about a CRD of an RGD found changed on a cluster (corrected, left,
// or fought over), as every owner kind does (ownerkinds.DriftEvents). It returns at once.
//
// The Event goes on the APIPropagation that serves the RGD, not on the RGD that owns the CRD:
// the APIPropagation is Flotilla's object, whose spec decides where and how the CRD is delivered
// and whose status shows each cluster's CRD, so it is where whoever runs the fleet API looks;
// the RGD is kro's, whose Events are a kro on the hub's too.
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
	var props flotillav1.APIPropagationList
	if err := r.Hub.List(ctx, &props); err != nil {
		return nil, err
	}
	if p := placerOf(rgd, props.Items); p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("no APIPropagation serves ResourceGraphDefinition %s", owner.Name)
}
