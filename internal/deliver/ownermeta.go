package deliver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// OwnerMeta is metadata an owner on a spoke keeps on its own object (Job.OwnerMeta): an
// instance of a fleet API carries a finalizer, labels and an inventory of the kinds it
// delivered, and these must be on it before its objects are.
type OwnerMeta struct {
	// Object names the owner object (apiVersion, kind, namespace, name) and carries the labels
	// and annotations it must have, other keys being left as they are, and the finalizers it
	// must have.
	Object *unstructured.Unstructured
	// AnnotationsAfterPrune, when set, replace Object's annotations once the delivery has
	// pruned: an inventory grows before the objects it lists are applied, and shrinks only once
	// what it no longer lists is gone.
	AnnotationsAfterPrune map[string]string
	// Release removes Object's finalizers instead of adding them, once the delivery has applied
	// and pruned everything: the owner is being deleted, and its objects are gone.
	Release bool
}

// errOwnerMetaTarget refuses owner metadata for an object that is not the owner itself.
var errOwnerMetaTarget = errors.New("owner metadata may be written only to the owner itself")

// errAwaitingOwnerMeta marks the objects a delivery did not apply because the owner's metadata
// could not be written first.
var errAwaitingOwnerMeta = errors.New("not applied: the owner's metadata is written first")

// ownerMetaKey is where a delivery's record (observe.Confirmed.Status) keeps the hash of the
// owner metadata confirmed on the cluster, apart from the statuses.
func ownerMetaKey(m *OwnerMeta) string { return render.Key(m.Object) + "#metadata" }

// ownerMetaHash identifies what OwnerMeta asks for.
func ownerMetaHash(m *OwnerMeta) string {
	raw, _ := json.Marshal([]any{m.Object.GetLabels(), m.Object.GetAnnotations(), m.Object.GetFinalizers(), m.AnnotationsAfterPrune, m.Release})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// ownerMetaBefore makes the owner carry its metadata before a delivery applies anything,
// unless an earlier delivery confirmed it (known).
func (w *clusterWorker) ownerMetaBefore(ctx context.Context, cl cluster.Cluster, owner render.Owner, m *OwnerMeta, known bool) error {
	if m == nil || m.Release || known {
		return nil
	}
	return w.keepOwnerMeta(ctx, cl, owner, m.Object, false)
}

// ownerMetaAfter completes the owner's metadata once a delivery has applied everything and,
// if it prunes, pruned: the inventory shrinks, or the finalizers go. It reports whether the
// metadata is now as asked, for the delivery's record.
func (w *clusterWorker) ownerMetaAfter(ctx context.Context, cl cluster.Cluster, job Job, pruned, known bool) (bool, error) {
	m := job.OwnerMeta
	done := pruned || !job.Prune
	switch {
	case m == nil || known:
		return true, nil
	case !done:
		return !m.Release && m.AnnotationsAfterPrune == nil, nil
	case m.Release:
		return true, w.keepOwnerMeta(ctx, cl, job.Owner, m.Object, true)
	case m.AnnotationsAfterPrune != nil && job.Prune:
		shrunk := m.Object.DeepCopy()
		shrunk.SetAnnotations(m.AnnotationsAfterPrune)
		return true, w.keepOwnerMeta(ctx, cl, job.Owner, shrunk, false)
	}
	return true, nil
}

// keepOwnerMeta makes the owner object carry want's labels, annotations and finalizers, or
// with release lack its finalizers. The owner is read from the API server (the spoke cache
// holds only Flotilla's objects, and users create owners on spokes) and written only when it
// lacks something, with a JSON merge patch carrying the resourceVersion it was read at: the
// write never creates the owner, never undoes a change made in between, and can take away a
// finalizer whoever added it, which a server-side apply could not.
func (w *clusterWorker) keepOwnerMeta(ctx context.Context, cl cluster.Cluster, owner render.Owner, want *unstructured.Unstructured, release bool) error {
	if !isOwnerObject(owner, w.name, want) {
		return fmt.Errorf("metadata of %s: %w", decide.Describe(want), errOwnerMetaTarget)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(want.GroupVersionKind())
	if err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(want), live); err != nil {
		if release && apierrors.IsNotFound(err) {
			return nil // gone: nothing holds it any more
		}
		return fmt.Errorf("metadata of %s: read: %w", decide.Describe(want), w.explainForbidden(err))
	}
	patch, needed := ownerMetaPatch(want, release, live)
	if !needed {
		return nil
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	err = cl.GetClient().Patch(ctx, live, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(FieldManager))
	countWrite(w.name, "metadata", err)
	if err != nil {
		return fmt.Errorf("metadata of %s: %w", decide.Describe(want), w.explainForbidden(err))
	}
	return nil
}

// ownerMetaPatch is the merge patch that makes live carry m, and whether live needs it.
func ownerMetaPatch(want *unstructured.Unstructured, release bool, live *unstructured.Unstructured) (map[string]any, bool) {
	md := map[string]any{"resourceVersion": live.GetResourceVersion()}
	finalizers := live.GetFinalizers()
	changed := false
	if release {
		kept := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return slices.Contains(want.GetFinalizers(), f) })
		if len(kept) != len(finalizers) {
			md["finalizers"], changed = stringsAny(kept), true
		}
		return map[string]any{"metadata": md}, changed
	}
	for _, f := range want.GetFinalizers() {
		if !slices.Contains(finalizers, f) {
			finalizers, changed = append(finalizers, f), true
		}
	}
	if changed {
		md["finalizers"] = stringsAny(finalizers)
	}
	if diff := missing(want.GetLabels(), live.GetLabels()); diff != nil {
		md["labels"], changed = diff, true
	}
	if diff := missing(want.GetAnnotations(), live.GetAnnotations()); diff != nil {
		md["annotations"], changed = diff, true
	}
	return map[string]any{"metadata": md}, changed
}

// missing returns the entries of want that have does not hold, nil when none.
func missing(want, have map[string]string) map[string]any {
	var out map[string]any
	for k, v := range want {
		if cur, ok := have[k]; ok && cur == v {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
