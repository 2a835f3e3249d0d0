package transparent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestRecordsSayWhatEachCopyIs: a transparent-mode object is kept as revisions too, and each
// cluster's Delivery record names one with the cluster's changes to it, so that the hub's
// durable objects alone, read with a plain client, give exactly each copy: its share of the
// divided replicas and the Placement's overrides there.
func TestRecordsSayWhatEachCopyIs(t *testing.T) {
	ctx := context.Background()
	_, c, spokes := startAudited(t, "a", "b")
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{
		ClusterSelector: &metav1.LabelSelector{},
		Overrides: []flotillav1.Override{{Name: "b", ClusterNames: []string{"b"},
			MergePatch: &apiextensionsv1.JSON{Raw: []byte(`{"metadata":{"labels":{"region":"b"}}}`)}}}}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		placement,
		deployment("cart", 3, map[string]string{flotillav1.LabelPlacement: "all"}),
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	owner := render.Owner{Kind: "Deployment.apps", Namespace: "shop", Name: "cart"}
	store := &revisions.Store{Reader: c}
	replicas := map[string]int64{}
	for _, cluster := range []string{"a", "b"} {
		fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("%s's record says what its copy is", cluster), func() error {
			var records flotillav1.DeliveryList
			if err := c.List(ctx, &records, client.InNamespace("shop"), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
				return err
			}
			var w *flotillav1.DeliveryWork
			for i := range records.Items {
				if records.Items[i].Spec.Cluster == cluster {
					w = records.Items[i].Spec.Work
				}
			}
			if w == nil {
				return fmt.Errorf("no work in %d records", len(records.Items))
			}
			objs, err := store.Work(ctx, owner, *w)
			if err != nil {
				return err
			}
			if len(objs) != 1 {
				return fmt.Errorf("%d objects", len(objs))
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(objs[0].GroupVersionKind())
			if err := spokes[cluster].Get(ctx, client.ObjectKeyFromObject(objs[0]), live); err != nil {
				return err
			}
			if got, want := render.Revision([]*unstructured.Unstructured{live}), w.Digest; got != want {
				return fmt.Errorf("the copy is at revision %s, the record says %s", got, want)
			}
			if (objs[0].GetLabels()["region"] == "b") != (cluster == "b") {
				return fmt.Errorf("labels %v", objs[0].GetLabels())
			}
			replicas[cluster], _, _ = unstructured.NestedInt64(objs[0].Object, "spec", "replicas")
			return nil
		})
	}
	if replicas["a"]+replicas["b"] != 3 || replicas["a"] == 0 || replicas["b"] == 0 {
		t.Errorf("the records say the copies run %v replicas, want 3 divided over both", replicas)
	}
}
