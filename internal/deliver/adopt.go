package deliver

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// adoptionManager is the field manager of the adopted mark. It is not FieldManager: the
// objects Flotilla applies never carry the mark, and a server-side apply removes only the
// fields its own manager set, so no later apply of the object takes the mark away.
const adoptionManager = FieldManager + "-adoption"

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
