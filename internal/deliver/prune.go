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
	unlisted, err := w.readUnlisted(ctx, cl, job, prev, found)
	if err != nil {
		return err
	}
	found = append(found, unlisted...)
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

// readUnlisted reads from the API server the objects an earlier delivery confirmed as the
// owner's, that it no longer wants and that the list did not show. The spoke cache can be
// behind the deliverer's own writes: an object applied a moment ago, or every event of the
// seconds its watch was down while the spoke's API server restarted. A prune that took the
// cache's silence for absence would forget an object it never deleted, and no later delivery
// would look for it again. There are none to read unless the cache is behind, or someone else
// deleted the object.
func (w *clusterWorker) readUnlisted(ctx context.Context, cl cluster.Cluster, job Job, prev *observe.Confirmed, found []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if prev == nil {
		return nil, nil
	}
	skip := make(map[string]bool, len(found)+len(job.Objects))
	for _, o := range found {
		skip[render.Key(o)] = true
	}
	for _, o := range job.Objects {
		skip[render.Key(o)] = true
	}
	kinds := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, gvk := range pruneKinds(job) {
		kinds[gvk.GroupKind()] = gvk
	}
	var out []*unstructured.Unstructured
	read := func(key string) error {
		if skip[key] {
			return nil
		}
		skip[key] = true
		group, kind, namespace, name, ok := render.SplitKey(key)
		gvk, known := kinds[schema.GroupKind{Group: group, Kind: kind}]
		if !ok || !known {
			return nil
		}
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		err := cl.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o)
		if kerrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s %s to prune: %w (nothing was deleted)", kind, name, err)
		}
		out = append(out, o)
		return nil
	}
	for key := range prev.Hashes {
		if err := read(key); err != nil {
			return nil, err
		}
	}
	for key := range prev.Left {
		if err := read(key); err != nil {
			return nil, err
		}
	}
	return out, nil
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
