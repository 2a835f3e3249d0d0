package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// adoptionManager is the field manager of the adopted mark. It is not FieldManager: the
// objects Flotilla applies never carry the mark, and a server-side apply removes only the
// fields its own manager set, so no later apply of the object takes the mark away.
const adoptionManager = FieldManager + "-adoption"

// release takes Flotilla's marks off adopted objects their owner no longer wants
// (decide.Released): they stay on the cluster as they are, no owner's from then on, and an
// owner waiting for one of them may take it. A merge patch with the resourceVersion read
// changes only the object the prune looked at.
func (w *clusterWorker) release(ctx context.Context, cl cluster.Cluster, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, o := range objs {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": o.GetResourceVersion(),
			"labels":          map[string]any{flotillav1.LabelOwner: nil, flotillav1.LabelManagedBy: nil},
			"annotations":     map[string]any{flotillav1.AnnotationOwner: nil, flotillav1.AnnotationHash: nil, flotillav1.AnnotationAdopted: nil},
		}})
		if err != nil {
			return err
		}
		err = cl.GetClient().Patch(ctx, o.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.FieldOwner(adoptionManager))
		countWrite(w.name, "release", err)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release %s: %w", decide.Describe(o), w.explainForbidden(err)))
			continue
		}
		w.released(render.Key(o))
	}
	return errors.Join(errs...)
}

// markAdopted marks live, an object owner is about to take over (decide.Decision.Adopt), as
// adopted (flotillav1.AnnotationAdopted): no prune or removal of owner ever deletes it
// (decide.Kept). The merge patch carries the resourceVersion live was read at, so it marks
// only the object the decision was taken on.
func (w *clusterWorker) markAdopted(ctx context.Context, cl cluster.Cluster, desired *unstructured.Unstructured, live metav1.Object, owner render.Owner) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": live.GetResourceVersion(),
		"annotations":     map[string]string{flotillav1.AnnotationAdopted: owner.String()},
	}})
	if err != nil {
		return err
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(desired.GroupVersionKind())
	target.SetNamespace(desired.GetNamespace())
	target.SetName(desired.GetName())
	err = cl.GetClient().Patch(ctx, target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(adoptionManager))
	countWrite(w.name, "adopt", err)
	return err
}
