package install_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// Release takes Flotilla's finalizer, and only Flotilla's, off the hub objects it holds, so
// they can be deleted once the controller is gone.
func TestRelease(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub())
	ctx := context.Background()
	if err := install.ApplyForSelf(ctx, fleet.Hub().RESTConfig(), nil); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(fleet.Hub().RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	const theirs = "example.com/keep"
	held := []string{flotillav1.FinalizerCleanup, theirs}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Finalizers: held},
			Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"},
				ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg"}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "shop", Finalizers: []string{flotillav1.FinalizerCleanup}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "shop", Finalizers: []string{theirs}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	kinds := []schema.GroupVersionKind{flotillav1.GroupVersion.WithKind("Propagation"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	finalizers := func(o client.Object) []string {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		return o.GetFinalizers()
	}

	var lines []string
	n, err := install.Release(ctx, c, kinds, true, func(l string) { lines = append(lines, l) })
	if err != nil || n != 2 || len(lines) != 2 {
		t.Fatalf("dry run: %d objects, %v, lines %v; want 2", n, err, lines)
	}
	if got := finalizers(objs[1]); !slices.Equal(got, held) {
		t.Fatalf("the dry run changed web's finalizers: %v", got)
	}

	if n, err = install.Release(ctx, c, kinds, false, func(string) {}); err != nil || n != 2 {
		t.Fatalf("release: %d objects, %v; want 2", n, err)
	}
	if got := finalizers(objs[1]); !slices.Equal(got, []string{theirs}) {
		t.Errorf("web keeps %v, want only %s", got, theirs)
	}
	if got := finalizers(objs[2]); len(got) != 0 {
		t.Errorf("cfg keeps %v, want none", got)
	}
	if got := finalizers(objs[3]); !slices.Equal(got, []string{theirs}) {
		t.Errorf("other has %v, want its own finalizer untouched", got)
	}
}
