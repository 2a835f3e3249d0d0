package propagation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Load reads the propagator req names, with the status the controller wrote moments ago
// should the cache not show it yet.
func (r *Reconciler) Load(ctx context.Context, req reconcile.Request) (ownerpass.Owner, error) {
	p, err := r.get(ctx, req)
	if err != nil {
		return nil, err
	}
	if status, ok := r.own.Get(p.obj.GetUID()); ok {
		*p.status = *status.(*flotillav1.PropagationStatus).DeepCopy()
	}
	return &loaded{r: r, p: p}, nil
}

// OwnerOf names the owner a request is for: a ClusterPropagation has no namespace.
func (r *Reconciler) OwnerOf(req reconcile.Request) render.Owner {
	kind := kindPropagation
	if req.Namespace == "" {
		kind = kindClusterPropagation
	}
	return render.Owner{Kind: kind, Namespace: req.Namespace, Name: req.Name}
}

// Gone drops what the controller holds of an owner that is gone.
func (r *Reconciler) Gone(owner render.Owner) {
	r.renders.forget(owner)
	r.rules.Forget(owner.String())
	r.mu.Lock()
	r.settle.Forget(owner)
	delete(r.warned, owner)
	r.mu.Unlock()
}

// loaded is a propagator in one reconcile; in gathers what its status is made of, from its
// step to its report.
type loaded struct {
	r  *Reconciler
	p  propagator
	in statusInput
}

func (l *loaded) Object() client.Object { return l.p.obj }
func (l *loaded) Owner() render.Owner   { return l.p.owner() }

// Removal is how a deleted propagator's objects leave: its deletion policy (Orphan leaves
// them), and its confirmation of a removal the prune budget holds.
func (l *loaded) Removal() decide.Strategy {
	return decide.Strategy{Deletion: l.p.spec.Strategy.Deletion, PruneConfirmed: l.p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]}
}

// Removing says in the status which clusters a removal waits for.
func (l *loaded) Removing(ctx context.Context, pending map[string]deliver.Result) error {
	clusters := slices.Sorted(maps.Keys(pending))
	in := statusInput{generation: l.p.obj.GetGeneration(), previous: *l.p.status, now: time.Now(),
		hold: &holdReason{flotillav1.ReasonProgressing, fmt.Sprintf("removing delivered objects from %d clusters: %v", len(clusters), clusters)}}
	return l.r.writeStatus(ctx, l.p, in)
}

// Step selects and renders the propagator's objects and says its pass, gathering in l.in what
// its status is made of; a hold is a step without a pass, its reason in l.in.hold.
func (l *loaded) Step(ctx context.Context) (ownerpass.Step, error) {
	r, p, in := l.r, l.p, &l.in
	*in = statusInput{generation: p.obj.GetGeneration(), previous: *p.status, now: time.Now()}
	if msg := r.placementRefRefused(p); msg != "" {
		in.hold = &holdReason{flotillav1.ReasonInvalidSpec, msg}
		return ownerpass.Step{}, nil
	}
	placement, err := ownerpass.PlacementOf(ctx, r.Hub, p.placementKey())
	if err != nil {
		return ownerpass.Step{}, err
	}
	in.progressDeadline = progressDeadline(placement)
	if placement == nil {
		h := holds.Check(guardOf(p, placement))
		in.hold = &holdReason{h.Reason, h.Message}
		return ownerpass.Step{}, nil
	}
	pass, err := r.selector().pass(ctx, r.renders, &r.rules, p, placement)
	var invalid invalidSpecError
	var unavailable kindUnavailableError
	switch {
	case errors.As(err, &invalid):
		in.hold = &holdReason{flotillav1.ReasonInvalidSpec, err.Error()}
		return ownerpass.Step{}, nil
	case errors.As(err, &unavailable):
		in.hold = &holdReason{flotillav1.ReasonKindUnavailable, err.Error()}
		in.retryAfter = kindRetry
		return ownerpass.Step{}, nil
	case err != nil:
		return ownerpass.Step{}, err
	}
	in.selected, in.revision, in.kinds = len(pass.Objects), pass.Revision, pass.Kinds
	in.targets = ownerpass.Decisions(placement)
	if !pass.Prune {
		in.hold = &holdReason{flotillav1.ReasonNothingSelected, nothingSelected}
	}
	return ownerpass.Step{Pass: &pass}, nil
}

// pass selects and renders p's objects (through renders) and says p's pass over placement,
// which exists: for the controller and for Preview alike. What the spec must fix is an
// invalidSpecError; a selected kind the hub cannot watch now a kindUnavailableError.
func (h hubSelector) pass(ctx context.Context, renders *renderCache, rules *override.Cache, p propagator, placement *flotillav1.Placement) (ownerpass.Pass, error) {
	hubObjects, sources, err := h.selectObjects(ctx, p)
	if err != nil {
		return ownerpass.Pass{}, err
	}
	owner := p.owner()
	rendered, err := renders.renderAll(owner, hubObjects)
	if err != nil {
		return ownerpass.Pass{}, invalidSpecError{err.Error()}
	}
	revision, kinds := render.Prepare(rendered)
	ignore, err := drift.NewIgnoreSet(p.spec.Strategy.IgnoreFields)
	if err != nil {
		return ownerpass.Pass{}, invalidSpecError{"spec.strategy." + err.Error()}
	}
	annotations := p.obj.GetAnnotations()
	return ownerpass.Pass{Owner: p.ledgerOwner(), Object: p.obj, Placement: placement, Objects: rendered, Revision: revision,
		Sources: sources, Pins: p.spec.RevisionPins, Approved: annotations[flotillav1.AnnotationApprove], Undo: annotations[flotillav1.AnnotationUndo],
		Rules: rules.Get(owner.String(), p.obj.GetGeneration(), p.spec.Overrides), Guard: guardOf(p, placement),
		Prune: prunes(p, rendered), Kinds: kinds, Strategy: strategyOf(p, revision), Ignore: ignore, Declared: p.spec.Strategy}, nil
}

func (l *loaded) Report(ctx context.Context, res *ownerpass.Result, err error) (reconcile.Result, error) {
	if res != nil {
		l.in.records, l.in.noHistory, l.in.rolloutStages = res.Records, res.NoHistory, res.Stages
		if err == nil {
			l.in.took(*res)
		}
	}
	return l.r.report(ctx, l.p, l.in, err)
}
