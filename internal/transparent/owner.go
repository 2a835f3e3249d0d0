package transparent

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Load reads the object req names.
func (r *Reconciler) Load(ctx context.Context, req reconcile.Request) (ownerpass.Owner, error) {
	u := r.newObject()
	if err := r.Hub.Get(ctx, req.NamespacedName, u); err != nil {
		return nil, err
	}
	return &loaded{r: r, u: u, owner: r.OwnerOf(req)}, nil
}

// OwnerOf names the owner a request is for.
func (r *Reconciler) OwnerOf(req reconcile.Request) render.Owner {
	return render.Owner{Kind: ownerKind(r.GVK), Namespace: req.Namespace, Name: req.Name}
}

// Gone forgets the last outcome reported of an object that is gone, or let go.
func (r *Reconciler) Gone(owner render.Owner) {
	r.mu.Lock()
	delete(r.reported, owner)
	r.mu.Unlock()
}

// loaded is an object in one reconcile; its pass, Placement and rendered key go from its
// step to its report.
type loaded struct {
	r         *Reconciler
	u         *unstructured.Unstructured
	owner     render.Owner
	pass      ownerpass.Pass
	placement *flotillav1.Placement
	key       string
}

func (o *loaded) Object() client.Object { return o.u }
func (o *loaded) Owner() render.Owner   { return o.owner }

// Removal is transparent mode's: every copy is deleted.
func (o *loaded) Removal() decide.Strategy { return strategy }

// Removing waits for the deliveries' results, which bring the object back.
func (o *loaded) Removing(context.Context, map[string]deliver.Result) error { return nil }

func (o *loaded) Report(ctx context.Context, res *ownerpass.Result, err error) (reconcile.Result, error) {
	if res == nil {
		return reconcile.Result{}, nil // held, and reported by step
	}
	return o.report(ctx, *res, err)
}

// Step says an object's pass: its Placement's, or, once confirmed, its removal from every
// cluster when it lost its label (hold.go). A hold is reported here, and is a step without a
// pass.
func (o *loaded) Step(ctx context.Context) (ownerpass.Step, error) {
	r, u, owner := o.r, o.u, o.owner
	placementName := u.GetLabels()[flotillav1.LabelPlacement]
	if placementName == "" {
		return r.unlabelled(ctx, u, owner)
	}
	placement, err := ownerpass.PlacementOf(ctx, r.Hub, client.ObjectKey{Namespace: u.GetNamespace(), Name: placementName})
	if err != nil {
		return ownerpass.Step{}, err
	}
	if placement == nil {
		// Nothing is delivered or removed; the Placement's creation brings the object back.
		h := holds.Check(r.guard(u, owner, placement))
		r.reportFailure(u, owner, h.Reason, h.Message)
		return ownerpass.Step{}, nil
	}
	rendered, paused, err := r.render(u, owner, placement)
	if err != nil {
		return ownerpass.Step{}, err
	}
	if len(placement.Status.Decisions) > 0 {
		// A confirmation of removing the object from every cluster was for the emptied
		// Placement it answered: now that it chooses clusters again, it must not let a later
		// emptying through unconfirmed.
		if err := r.dropConfirmation(ctx, u, holds.Token(placement.Generation, nil)); err != nil {
			return ownerpass.Step{}, err
		}
	}
	pass, err := r.pass(u, owner, placement, rendered, paused)
	if err != nil {
		// Nothing changes anywhere: a pin that cannot be read must not let its cluster move on.
		r.reportFailure(u, owner, flotillav1.ReasonInvalidSpec, err.Error())
		return ownerpass.Step{}, nil
	}
	o.pass, o.placement, o.key = pass, placement, render.Key(rendered)
	return ownerpass.Step{Pass: &o.pass}, nil
}

// report says what an object's pass did: a Warning for what failed or waits, the fleet-wide
// status.
func (o *loaded) report(ctx context.Context, res ownerpass.Result, err error) (reconcile.Result, error) {
	r, u, owner := o.r, o.u, o.owner
	// What the gate found is said though the pass failed after it: its memory says it was.
	ownerpass.ReportRollout(r.recorder, u, &res)
	if err != nil {
		return reconcile.Result{}, err
	}
	if h := res.Hold; h != nil {
		r.reportFailure(u, owner, h.Reason, h.Message)
		return reconcile.Result{}, r.writeStatus(ctx, u, res.Chosen, nil, nil, r.pulledCopies(ctx, u, res))
	}
	if res.Held != "" { // the only hold that lets deliveries go on: the Placement lags its spec
		r.reportFailure(u, owner, flotillav1.ReasonPlacementPending, res.Held)
	} else {
		reason, message := r.failure(o.placement, res, o.key)
		r.reportFailure(u, owner, reason, message)
	}
	return reconcile.Result{RequeueAfter: res.Recheck}, errors.Join(res.Err, r.writeStatus(ctx, u, res.Chosen, res.Computed.Shares[o.key], behind(o.pass, res),
		r.pulledCopies(ctx, u, res)))
}
