package propagation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// cleanup removes (or, with Orphan, leaves) a deleted propagator's objects on every cluster
// it delivered to, then releases its finalizer. Unjoined clusters are skipped: their objects
// stay. A cluster that cannot be reached holds the finalizer until it can.
func (r *Reconciler) cleanup(ctx context.Context, p propagator) error {
	if !controllerutil.ContainsFinalizer(p.obj, flotillav1.FinalizerCleanup) {
		return nil
	}
	owner := p.owner()
	records, err := r.Ledger.Records(ctx, owner)
	if err != nil {
		return err
	}
	strategy := decide.Strategy{Deletion: p.spec.Strategy.Deletion, PruneConfirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]}
	if pending, err := r.fanout.Cleanup(ctx, owner, records, strategy); len(pending) > 0 {
		clusters := slices.Sorted(maps.Keys(pending))
		in := statusInput{generation: p.obj.GetGeneration(), previous: *p.status,
			hold: &holdReason{flotillav1.ReasonProgressing, fmt.Sprintf("removing delivered objects from %d clusters: %v", len(clusters), clusters)}}
		return errors.Join(r.writeStatus(ctx, p, in), err)
	}
	r.forget(owner)
	_, err = ownerkinds.SetFinalizer(ctx, r.Hub, p.obj, false, ownerkinds.FinalizerPatch{})
	return client.IgnoreNotFound(err)
}

// forget drops everything the controller and the deliverer hold of an owner that is gone.
func (r *Reconciler) forget(owner render.Owner) {
	r.Deliverer.ForgetEverywhere(owner)
	r.renders.forget(owner)
	r.Revisions.Forget(owner)
	r.rules.Forget(owner.String())
	r.mu.Lock()
	r.settle.Forget(owner)
	delete(r.warned, owner)
	r.mu.Unlock()
	r.passes.Forget(owner)
}

// ownerOf names the owner a request is for: a ClusterPropagation has no namespace.
func ownerOf(req reconcile.Request) render.Owner {
	kind := kindPropagation
	if req.Namespace == "" {
		kind = kindClusterPropagation
	}
	return render.Owner{Kind: kind, Namespace: req.Namespace, Name: req.Name}
}
