package cli

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func TestTransparentKind(t *testing.T) {
	for word, want := range map[string]string{"deployment": "Deployment", "Deployments": "Deployment", "deploy": "Deployment",
		"deployment.apps": "Deployment", "sts": "StatefulSet", "job": "Job", "cm": "ConfigMap", "svc": "Service", "hpa": "HorizontalPodAutoscaler",
		"secret": "", "pod": "", "propagation": ""} {
		gvk, ok := transparentKind(word)
		if ok != (want != "") || gvk.Kind != want {
			t.Errorf("transparentKind(%q) = %v, %v; want %q", word, gvk, ok, want)
		}
	}
}

// TestPlanTransparentObjectWithoutPlacement: an object whose Placement does not exist is held
// (the plan says so, and plans no cluster); one never labelled is refused, saying what to do.
func TestPlanTransparentObjectWithoutPlacement(t *testing.T) {
	deployment := func(name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels}}
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), apimeta.RESTScopeNamespace)
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithRESTMapper(mapper).
		WithObjects(deployment("cart", map[string]string{flotillav1.LabelPlacement: "gone"}), deployment("plain", nil)).Build()
	ctx := context.Background()
	where := scope{namespace: "shop", given: true}

	desired, err := desiredOf(ctx, hub, "deploy/cart", where, newSpokeClients(hub))
	if err != nil {
		t.Fatal(err)
	}
	if len(desired) != 1 || len(desired[0].Clusters) != 0 || len(desired[0].Holds) != 1 ||
		!strings.HasPrefix(desired[0].Holds[0], "Placement shop/gone does not exist") {
		t.Fatalf("desired %+v", desired)
	}
	_, err = desiredOf(ctx, hub, "deployment/plain", where, newSpokeClients(hub))
	wantError(t, err, "has no label flotilla.dev/placement", "label it with the name of a Placement")
	_, err = desiredOf(ctx, hub, "deployment/missing", where, newSpokeClients(hub))
	wantError(t, err, "deployment shop/missing", "not found")
}
