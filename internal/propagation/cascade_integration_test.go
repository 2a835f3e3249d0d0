package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestPruneDoesNotCascadeIntoUnmanagedData: pruning a delivered Namespace or CRD would delete
// what is inside it, objects Flotilla never delivered. Such a prune waits for confirmation,
// naming what it would take along; the spoke's audit log proves nothing was deleted meanwhile.
func TestPruneDoesNotCascadeIntoUnmanagedData(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	spoke := e.spokes["spoke-a"]
	gizmos := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gizmo", Plural: "gizmos", Singular: "gizmo"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data-2"}},
		gizmos,
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "flotilla-system"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
	} {
		e.create(t, obj)
	}
	hundred := int32(100)
	e.create(t, &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "infra"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all", Namespace: "flotilla-system"},
			ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "v1", Kind: "Namespace", Name: "data"},
				{APIVersion: "v1", Kind: "Namespace", Name: "data-2"},
				{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "gizmos.example.com"},
			},
			Strategy: flotillav1.PropagationStrategy{PruneBudgetPercent: &hundred}}})
	condition := func(condType string, want metav1.ConditionStatus, contains string) *flotillav1.ClusterPropagation {
		t.Helper()
		cp := &flotillav1.ClusterPropagation{}
		fleettest.Eventually(t, wait, fmt.Sprintf("infra %s=%s containing %q", condType, want, contains), func() error {
			if err := e.hub.Get(ctx, client.ObjectKey{Name: "infra"}, cp); err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(cp.Status.Conditions, condType)
			if c == nil || c.Status != want || !strings.Contains(c.Message, contains) {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		return cp
	}
	condition(flotillav1.PropagationApplied, metav1.ConditionTrue, "")
	e.onSpoke(t, "spoke-a", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, false, nil)

	// Data that Flotilla never delivered, inside what it did.
	if err := spoke.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "precious", Namespace: "data"}, Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	gizmo := &unstructured.Unstructured{}
	gizmo.SetAPIVersion("example.com/v1")
	gizmo.SetKind("Gizmo")
	gizmo.SetName("g1")
	gizmo.SetNamespace("default")
	if err := spoke.Create(ctx, gizmo); err != nil {
		t.Fatal(err)
	}
	since := time.Now()

	// The Namespace and the CRD leave the selection; data-2 stays, so this is a prune, not an
	// emptied selection (which would hold anyway).
	cp := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}
	e.updateHub(t, cp, func() { cp.Spec.ResourceSelectors = cp.Spec.ResourceSelectors[1:2] })
	got := condition(flotillav1.PropagationPruneBlocked, metav1.ConditionTrue, "Flotilla does not manage")
	msg := apimeta.FindStatusCondition(got.Status.Conditions, flotillav1.PropagationPruneBlocked).Message
	if !strings.Contains(msg, "configmap data/precious") && !strings.Contains(msg, "gizmo default/g1") {
		t.Errorf("the condition does not name what the prune would take along: %s", msg)
	}
	deletes := func() int {
		return e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool {
			return ev.Verb == "delete" && ev.StageTimestamp.After(since)
		})
	}
	fleettest.Consistently(t, 3*time.Second, "nothing deleted before the confirmation", func() error {
		if n := deletes(); n != 0 {
			return fmt.Errorf("%d deletes by Flotilla", n)
		}
		return nil
	})

	// Confirmed: the prune goes ahead.
	revision := msg[strings.LastIndex(msg, "=")+1:]
	e.updateHub(t, cp, func() { cp.Annotations = map[string]string{flotillav1.AnnotationConfirmPrune: revision} })
	fleettest.Eventually(t, wait, "the confirmed prune deletes the Namespace and the CRD", func() error {
		if n := deletes(); n < 2 {
			return fmt.Errorf("%d deletes so far", n)
		}
		return nil
	})
}
