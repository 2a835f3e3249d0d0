package ownerpass

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Kind is an owner kind that delivers objects, as Reconcile drives it: the adapter its
// controller is.
type Kind interface {
	// Load reads the owner req names: a NotFound error when it no longer exists.
	Load(ctx context.Context, req reconcile.Request) (Owner, error)
	// OwnerOf names the owner req is for, as the records and the spokes' markers name it.
	OwnerOf(req reconcile.Request) render.Owner
	// Gone drops what the kind remembers of an owner that no longer exists, or was let go.
	Gone(owner render.Owner)
}

// Owner is one owner as its kind loaded it, for one reconcile.
type Owner interface {
	// Object is its hub object: its deletion, its finalizer, its confirmation annotation.
	Object() client.Object
	// Owner names it as the records and the spokes' markers do.
	Owner() render.Owner
	// Removal is how its objects leave their clusters when it is deleted, or let go: its
	// deletion policy and confirmation.
	Removal() decide.Strategy
	// Removing says that a removal waits for clusters, with each one's progress: a status, say.
	Removing(ctx context.Context, pending map[string]deliver.Result) error
	// Step says what this reconcile does with the owner (see Step). A hold the kind reports
	// itself is a Step with no Pass.
	Step(ctx context.Context) (Step, error)
	// Report says what the pass did: res is its result and err what stopped it (Run), or res
	// is nil when the Step runs no pass. It returns the reconcile's result.
	Report(ctx context.Context, res *Result, err error) (reconcile.Result, error)
}

// Step is what one reconcile does with an owner: run Pass, or let the owner go from every
// cluster it has objects on as if it were deleted (LetGo; a transparent-mode object whose
// label was removed, once confirmed; an RGD no APIPropagation serves), or nothing more (none
// of them: the kind held the owner).
type Step struct {
	Pass  *Pass
	LetGo bool
}

// FinalizerPolicy is what an Owner implements when it carries the cleanup finalizer only
// sometimes (an RGD: only while its APIPropagation deletes its CRDs with it), or beside
// finalizers of others that a patch must not overwrite (locked: the patch carries the
// resourceVersion). Without it an owner always carries the finalizer, patched unlocked.
type FinalizerPolicy interface {
	Finalizer() (want, locked bool)
}

// Releaser is what an Owner implements when letting it go waits for more than its objects'
// removal (an RGD: the instances on clusters whose CRD is being deleted are cleaned up first).
// Released reports whether that is done; until it is, the finalizer stays and the owner is
// looked at again after releaseRetry. It is asked on every let-go, finalizer or not.
type Releaser interface {
	Released(ctx context.Context) (bool, error)
}

// releaseRetry is how soon an owner whose release waits (for its clusters, or Releaser) is
// looked at again.
const releaseRetry = 5 * time.Second

// Reconcile is one reconcile of an owner of kind k, the same for every owner kind that delivers
// objects. An owner that no longer exists is forgotten (what it delivered stays on the
// spokes: it went without its cleanup, a finalizer taken off by hand). A deleted one, or one
// its Step lets go, has its objects removed from every cluster its records name (Removal),
// then its finalizer released. Otherwise the finalizer is made sure of before the owner's pass
// runs, and the kind reports the pass.
func (r *Runner) Reconcile(ctx context.Context, k Kind, req reconcile.Request) (reconcile.Result, error) {
	o, err := k.Load(ctx, req)
	if apierrors.IsNotFound(err) {
		r.gone(k, k.OwnerOf(req))
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !o.Object().GetDeletionTimestamp().IsZero() {
		return r.letGo(ctx, k, o)
	}
	step, err := o.Step(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	if step.LetGo {
		return r.letGo(ctx, k, o)
	}
	if step.Pass == nil {
		return o.Report(ctx, nil, nil)
	}
	if err := r.ensureFinalizer(ctx, o); err != nil {
		return reconcile.Result{}, err
	}
	res, err := r.Run(ctx, *step.Pass)
	return o.Report(ctx, &res, err)
}

// finalizerOf is how o carries the cleanup finalizer (FinalizerPolicy).
func finalizerOf(o Owner) (want, locked bool) {
	if p, ok := o.(FinalizerPolicy); ok {
		return p.Finalizer()
	}
	return true, false
}

// letGo removes the owner's objects from every cluster its records name (unjoined clusters are
// skipped: their objects stay), waits for what else the kind releases (Releaser), then
// releases its finalizer, with the confirmation it may carry: that was for this removal, and
// must not carry over to the next. A cluster that cannot be reached holds the finalizer until
// it can. An owner with neither the finalizer nor records has nothing to let go, unless its
// kind releases more.
func (r *Runner) letGo(ctx context.Context, k Kind, o Owner) (reconcile.Result, error) {
	obj := o.Object()
	finalized := controllerutil.ContainsFinalizer(obj, flotillav1.FinalizerCleanup)
	owner := o.Owner()
	records, err := r.Fanout.Ledger.Records(ctx, owner)
	if err != nil {
		return reconcile.Result{}, err
	}
	releaser, releases := o.(Releaser)
	if !finalized && len(records) == 0 && !releases {
		return reconcile.Result{}, nil
	}
	pending, err := r.Fanout.Cleanup(ctx, owner, records, o.Removal())
	if len(pending) > 0 {
		// The deliveries' results bring the owner back here; a removal that waits for
		// something no delivery reports (a confirmation, a cluster that answers again) is
		// looked at again after releaseRetry.
		return reconcile.Result{RequeueAfter: releaseRetry}, errors.Join(o.Removing(ctx, pending), err)
	}
	if err != nil {
		return reconcile.Result{}, err // a record write that failed is retried
	}
	if releases {
		if done, err := releaser.Released(ctx); err != nil || !done {
			return reconcile.Result{RequeueAfter: releaseRetry}, err
		}
	}
	r.gone(k, owner)
	if !finalized {
		return reconcile.Result{}, nil
	}
	_, locked := finalizerOf(o)
	_, err = ownerkinds.SetFinalizer(ctx, r.Hub, obj, false, ownerkinds.FinalizerPatch{Locked: locked, Also: func() { WithoutConfirmation(obj) }})
	// A finalizer added moments ago is no longer there: an owner let go and enrolled again
	// (a transparent-mode object labelled again) has it added at its next pass.
	r.mu.Lock()
	delete(r.finalized, obj.GetUID())
	r.mu.Unlock()
	return reconcile.Result{}, client.IgnoreNotFound(err)
}

// gone drops everything the runner, the deliverer and the kind hold of an owner that is gone.
func (r *Runner) gone(k Kind, owner render.Owner) {
	r.Fanout.Deliverer.ForgetEverywhere(owner)
	if r.Revisions != nil {
		r.Revisions.Forget(owner) // its revisions go with it (owner references)
	}
	r.Forget(owner)
	k.Gone(owner)
}

// WithoutConfirmation takes a removal's confirmation (flotilla.dev/confirm-prune) off obj: it was
// for one removal, and must not let the next through.
func WithoutConfirmation(obj client.Object) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[flotillav1.AnnotationConfirmPrune]; ok {
		delete(annotations, flotillav1.AnnotationConfirmPrune)
		obj.SetAnnotations(annotations)
	}
}

// cacheLag is how long the runner trusts its own finalizer writes over a hub cache that does
// not show them yet. Watch events arrive within milliseconds; the margin covers a busy machine.
const cacheLag = 10 * time.Second

// ensureFinalizer puts the cleanup finalizer on the owner's object, or takes it off when the
// owner carries it only sometimes (FinalizerPolicy). A reconcile that follows an addition at
// once may read a cache without it; the finalizer is not patched again within the cache's lag
// then.
func (r *Runner) ensureFinalizer(ctx context.Context, o Owner) error {
	obj := o.Object()
	want, locked := finalizerOf(o)
	uid := obj.GetUID()
	r.mu.Lock()
	at, recent := r.finalized[uid]
	recent = want && recent && time.Since(at) < cacheLag
	r.mu.Unlock()
	if recent {
		return nil
	}
	added, err := ownerkinds.SetFinalizer(ctx, r.Hub, obj, want, ownerkinds.FinalizerPatch{Locked: locked})
	if err != nil {
		return err
	}
	if added && want {
		r.mu.Lock()
		if r.finalized == nil {
			r.finalized = map[types.UID]time.Time{}
		}
		for id, t := range r.finalized {
			if time.Since(t) >= cacheLag {
				delete(r.finalized, id)
			}
		}
		r.finalized[uid] = time.Now()
		r.mu.Unlock()
	}
	return nil
}
