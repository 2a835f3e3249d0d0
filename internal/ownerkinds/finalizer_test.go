package ownerkinds

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func TestSetFinalizer(t *testing.T) {
	ctx := context.Background()
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", Finalizers: []string{"example.com/theirs"},
		Annotations: map[string]string{flotillav1.AnnotationConfirmPrune: "removed"}}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(p).Build()
	stored := func() *flotillav1.Propagation {
		got := &flotillav1.Propagation{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	if patched, err := SetFinalizer(ctx, hub, p, true, FinalizerPatch{}); err != nil || !patched {
		t.Fatalf("add: patched %v, %v", patched, err)
	}
	if got := stored(); !controllerutil.ContainsFinalizer(got, flotillav1.FinalizerCleanup) || !controllerutil.ContainsFinalizer(got, "example.com/theirs") {
		t.Errorf("finalizers after adding: %v", got.Finalizers)
	}
	if patched, err := SetFinalizer(ctx, hub, p, true, FinalizerPatch{}); err != nil || patched {
		t.Errorf("adding again: patched %v, %v", patched, err)
	}

	// Locked: a copy read before another write is refused.
	stale := p.DeepCopy()
	if _, err := SetFinalizer(ctx, hub, p, false, FinalizerPatch{}); err != nil {
		t.Fatal(err)
	}
	if _, err := SetFinalizer(ctx, hub, stale, false, FinalizerPatch{Locked: true}); !apierrors.IsConflict(err) {
		t.Errorf("a locked patch of a stale copy: %v, want a conflict", err)
	}

	// Also goes in the same patch.
	if _, err := SetFinalizer(ctx, hub, p, true, FinalizerPatch{}); err != nil {
		t.Fatal(err)
	}
	if _, err := SetFinalizer(ctx, hub, p, false, FinalizerPatch{Locked: true, Also: func() { p.Annotations = nil }}); err != nil {
		t.Fatal(err)
	}
	if got := stored(); controllerutil.ContainsFinalizer(got, flotillav1.FinalizerCleanup) || len(got.Annotations) != 0 || len(got.Finalizers) != 1 {
		t.Errorf("after removing with Also: finalizers %v, annotations %v", got.Finalizers, got.Annotations)
	}
}
