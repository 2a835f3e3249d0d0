package transparent

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// The Reconciler is its kind's adapter to ownerpass.Runner.Reconcile, which loads, lets go and
// runs the pass of every owner kind alike; loaded is one labelled object as one reconcile
// sees it.

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
func (o *loaded) Removing(context.Context, []string) error { return nil }

func (o *loaded) Step(ctx context.Context) (ownerpass.Step, error) { return o.r.step(ctx, o) }

func (o *loaded) Report(ctx context.Context, res *ownerpass.Result, err error) (reconcile.Result, error) {
	if res == nil {
		return reconcile.Result{}, nil // held, and reported by step
	}
	return o.r.report(ctx, o, *res, err)
}
