package fleetapi

import (
	"context"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Load reads the RGD req names and the APIPropagation that serves it (none: it is let go).
func (r *Reconciler) Load(ctx context.Context, req reconcile.Request) (ownerpass.Owner, error) {
	rgd := &kro.ResourceGraphDefinition{}
	if err := r.Hub.Get(ctx, req.NamespacedName, rgd); err != nil {
		return nil, err
	}
	placer, err := ServedBy(ctx, r.Hub, rgd)
	if err != nil {
		return nil, err
	}
	return &loaded{r: r, rgd: rgd, placer: placer}, nil
}

// OwnerOf names the owner of the CRDs of the RGD req names.
func (r *Reconciler) OwnerOf(req reconcile.Request) render.Owner { return ownerOf(req.Name) }

// Gone forgets an RGD gone from the hub, or let go. With no finalizer of Flotilla's on a
// deleted one, its CRDs stay where they are, unmanaged.
func (r *Reconciler) Gone(owner render.Owner) {
	r.lastServed.forget(owner.Name)
	r.carried.forget(owner.Name)
	if st, ok := r.states.get(owner.Name); ok {
		r.compiles.forget(st.uid)
		r.unserveGraphs(st.kind)
	}
	r.unpublish(owner.Name)
}

// loaded is an RGD in one reconcile, with the APIPropagation that serves it (nil: none).
type loaded struct {
	r      *Reconciler
	rgd    *kro.ResourceGraphDefinition
	placer *flotillav1.APIPropagation
	// pass is the pass Step set up (nil: none runs).
	pass *rgdPass
}

func (l *loaded) Object() client.Object { return l.rgd }
func (l *loaded) Owner() render.Owner   { return ownerOf(l.rgd.Name) }

// deleting reports whether the RGD or its APIPropagation is being deleted.
func (l *loaded) deleting() bool {
	return !l.rgd.DeletionTimestamp.IsZero() || (l.placer != nil && !l.placer.DeletionTimestamp.IsZero())
}

// Removal deletes the CRDs where the APIPropagation's removal is Delete and it or the RGD is
// being deleted, and leaves them unmanaged otherwise (Orphan).
func (l *loaded) Removal() decide.Strategy {
	if l.placer != nil && l.deleting() && l.placer.Spec.Removal == flotillav1.DeletionDelete {
		return strategyOf(l.placer, l.rgd.Name)
	}
	return decide.Strategy{Deletion: flotillav1.DeletionOrphan, Conflict: flotillav1.ConflictReject}
}

// Removing publishes the clusters the CRDs are still being removed from.
func (l *loaded) Removing(_ context.Context, pending map[string]deliver.Result) error {
	if l.placer == nil {
		return nil
	}
	strategy := l.Removal()
	st := l.state()
	for _, c := range slices.Sorted(maps.Keys(pending)) {
		st.rows = append(st.rows, removingRow(l.rgd.Name, c, strategy.Deletion, removalMessage(strategy, pending[c])))
	}
	l.r.publish(l.rgd.Name, st)
	return nil
}

// Released releases the RGD's graphs on every cluster but those whose CRD is being deleted,
// which wait for their instances to be cleaned up (releaseGraphs).
func (l *loaded) Released(ctx context.Context) (bool, error) {
	waiting := l.r.releaseGraphs(ctx, l.rgd, nil)
	if len(waiting) == 0 {
		return true, nil
	}
	if l.placer != nil {
		st := l.state()
		for _, c := range waiting {
			st.rows = append(st.rows, removingRow(l.rgd.Name, c, flotillav1.DeletionDelete, waitingMessage))
		}
		l.r.publish(l.rgd.Name, st)
	}
	return false, nil
}

// Finalizer: an RGD carries Flotilla's finalizer only while its CRDs are to be deleted with
// it, and beside kro's, which the patch must not overwrite.
func (l *loaded) Finalizer() (want, locked bool) {
	return l.placer != nil && l.placer.Spec.Removal == flotillav1.DeletionDelete, true
}

// Step lets the RGD go when no APIPropagation serves it (or the one that does is being
// deleted), holds it while its APIPropagation may not use its Placement or the Placement is
// missing, and otherwise serves it.
func (l *loaded) Step(ctx context.Context) (ownerpass.Step, error) {
	r, rgd, placer := l.r, l.rgd, l.placer
	if placer == nil || !placer.DeletionTimestamp.IsZero() {
		return ownerpass.Step{LetGo: true}, nil
	}
	st := l.state()
	if msg := placementRefProblem(placer, r.AdminNamespaces); msg != "" {
		st.held = msg
		r.publish(rgd.Name, st)
		return ownerpass.Step{}, nil
	}
	placement, err := ownerpass.PlacementOf(ctx, r.Hub, PlacementOf(placer))
	if err != nil {
		return ownerpass.Step{}, err
	}
	if placement == nil {
		// Nothing is delivered or removed while the Placement is missing; its creation
		// brings the RGD back.
		st.held = holds.Check(guardOf(placer, rgd.Name, nil)).Message
		r.publish(rgd.Name, st)
		return ownerpass.Step{}, nil
	}
	pass, step, err := r.newPass(rgd, placer, placement)
	if err != nil {
		return ownerpass.Step{}, err
	}
	l.pass = pass
	return ownerpass.Step{Pass: &step}, nil
}

// Report publishes what the pass did (rgdPass.report). A held RGD published its state in Step,
// and waits for a change.
func (l *loaded) Report(ctx context.Context, res *ownerpass.Result, err error) (reconcile.Result, error) {
	if res == nil || err != nil {
		return reconcile.Result{}, err
	}
	return l.pass.report(ctx, res)
}

// state is the RGD's published state before its rows.
func (l *loaded) state() apiState { return stateOf(l.rgd, l.placer) }

// stateOf is the state of an RGD served by placer, before its rows.
func stateOf(rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation) apiState {
	return apiState{uid: rgd.UID, placer: placer.Name, generation: rgd.Generation, kind: kro.InstanceKind(rgd)}
}
