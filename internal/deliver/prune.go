package deliver

import (
	"context"
	"errors"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// prune deletes (or, with Orphan, leaves) the owner's objects on the cluster that the job no
// longer wants, newest phase first. Any error reading the cluster aborts before deleting.
// Only objects in the owner's scope count, and the budget counts as the owner's only those it
// wants or prev confirmed (decide.Leftovers).
func (w *clusterWorker) prune(ctx context.Context, cl cluster.Cluster, job Job, prev *observe.Confirmed) error {
	var found []*unstructured.Unstructured
	for _, gvk := range pruneKinds(job) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := w.readList(ctx, cl, list, client.MatchingLabels{flotillav1.LabelOwner: job.Owner.LabelValue()})
		if meta.IsNoMatchError(err) {
			continue // the kind is not served: no object of it can exist
		}
		if err != nil {
			return fmt.Errorf("list %s to prune: %w (nothing was deleted)", gvk.Kind, err)
		}
		for i := range list.Items {
			found = append(found, &list.Items[i])
		}
	}
	stale, owned := decide.Leftovers(found, job.Objects, job.Owner, job.Strategy, prev.Owns)
	released := decide.Released(found, job.Objects, job.Owner, job.Strategy)
	if len(stale) == 0 {
		return w.release(ctx, cl, released)
	}
	if decide.OverBudget(job.Strategy, job.Revision, len(stale), owned) {
		return pruneBlockedError{stale: len(stale), owned: owned, budget: job.PruneBudget, confirm: decide.ConfirmCommand(job.Owner, job.Strategy, job.ConfirmValue(job.Revision))}
	}
	if !job.Confirmed(job.Revision) {
		for _, o := range stale {
			c, err := cascadeOf(ctx, cl, o)
			if err != nil {
				return fmt.Errorf("%w (nothing was deleted)", err)
			}
			if c.count > 0 {
				return cascadeBlockedError{object: decide.Describe(o), cascade: c, confirm: decide.ConfirmCommand(job.Owner, job.Strategy, job.ConfirmValue(job.Revision))}
			}
		}
	}
	if job.PruneOrder != "" {
		return errors.Join(w.pruneInWaves(ctx, cl, job.PruneOrder, stale), w.release(ctx, cl, released))
	}
	render.SortForDeletion(stale)
	return errors.Join(w.deleteAll(ctx, cl, stale), w.release(ctx, cl, released))
}

// deleteAll deletes objects of the cluster, each only if it is still the object that was read.
func (w *clusterWorker) deleteAll(ctx context.Context, cl cluster.Cluster, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, o := range objs {
		uid := o.GetUID()
		err := cl.GetClient().Delete(ctx, o, client.Preconditions{UID: &uid}, client.PropagationPolicy("Background"))
		countWrite(w.name, "delete", err)
		if err != nil && !kerrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("prune %s: %w", decide.Describe(o), err))
			continue
		}
		w.seen.Deleted(render.Key(o))
		w.released(render.Key(o))
	}
	return errors.Join(errs...)
}

// pruneKinds is every kind the owner may have objects of: what it delivered before and what
// it delivers now.
func pruneKinds(job Job) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	add := func(gvk schema.GroupVersionKind) {
		if !seen[gvk] {
			seen[gvk] = true
			out = append(out, gvk)
		}
	}
	for _, gvk := range job.PruneKinds {
		add(gvk)
	}
	for _, o := range job.Objects {
		add(o.GroupVersionKind())
	}
	return out
}

// pruneBlockedError is a prune held by the budget.
type pruneBlockedError struct {
	stale, owned, budget int
	confirm              string // the command that confirms (decide.ConfirmCommand)
}

func (e pruneBlockedError) Error() string {
	return fmt.Sprintf("pruning would delete %d of the %d objects known to be the owner's here, more than the prune budget (%d%%) allows; nothing was deleted. "+
		"Fix the selection, or confirm with: %s", e.stale, e.owned, e.budget, e.confirm)
}
