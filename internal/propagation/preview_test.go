package propagation

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestPreviewHonoursPins: a cluster spec.revisionPins pins to a kept revision is previewed
// with that revision's objects and revision, the others with the latest; a pin to a revision
// that is not kept fails that cluster only, as it does in the controller.
func TestPreviewHonoursPins(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, flotillav1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	owner := render.Owner{Kind: kindPropagation, Namespace: "shop", Name: "web"}
	settings := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"v": v}}
	}
	old, err := runtime.DefaultUnstructuredConverter.ToUnstructured(settings("1"))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := render.Render(&unstructured.Unstructured{Object: old}, owner)
	if err != nil {
		t.Fatal(err)
	}
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "all"},
		Status: flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{{ClusterName: "a"}, {ClusterName: "b"}, {ClusterName: "c"}}}}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	hub := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(settings("2"), placement).Build()
	store := &revisions.Store{Hub: hub, Metadata: hub, Reader: hub}
	first, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision([]*unstructured.Unstructured{kept}),
		[]*unstructured.Unstructured{kept}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: flotillav1.PropagationSpec{
		PlacementRef:      flotillav1.PlacementRef{Name: "all"},
		ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}},
		RevisionPins:      []flotillav1.RevisionPin{{Cluster: "a", Revision: first}, {Cluster: "c", Revision: "propagation.web.gone"}}}}

	d, err := Preview(ctx, hub, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Clusters) != 3 || len(d.Holds) != 0 {
		t.Fatalf("clusters %+v, holds %v", d.Clusters, d.Holds)
	}
	value := func(i int) string {
		v, _, _ := unstructured.NestedString(d.Clusters[i].Objects[0].Object, "data", "v")
		return v
	}
	a, b, c := d.Clusters[0], d.Clusters[1], d.Clusters[2]
	if a.Err != nil || value(0) != "1" || a.Pinned != first || a.Revision != render.Revision([]*unstructured.Unstructured{kept}) {
		t.Errorf("pinned cluster a: v=%q pinned %q revision %q err %v; want the kept revision %s", value(0), a.Pinned, a.Revision, a.Err, first)
	}
	if b.Err != nil || value(1) != "2" || b.Pinned != "" || b.Revision == a.Revision {
		t.Errorf("cluster b: v=%q pinned %q revision %q err %v; want the latest", value(1), b.Pinned, b.Revision, b.Err)
	}
	if c.Err == nil || !strings.Contains(c.Err.Error(), "is not kept") {
		t.Errorf("cluster c pinned to a revision not kept: %v", c.Err)
	}
}
