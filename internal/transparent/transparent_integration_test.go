package transparent_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

func TestMain(m *testing.M) {
	fleettest.SetControllerLogger()
	os.Exit(fleettest.Main(m))
}

func deployment(name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}},
	}
}

// TestTransparentMode covers what the end-to-end test does not: replicas divided with a
// remainder, a delivery failure reported as an Event on the hub object, and a Placement's
// per-cluster overrides.
func TestTransparentMode(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("a"), fleettest.APIOnlySpoke("b"))
	ctx := context.Background()
	c := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	var err error
	spokes := map[string]client.Client{}
	for _, s := range fleet.Spokes() {
		if err := membership.Join(ctx, c, membership.JoinOptions{Name: s.Name(), Spoke: s.RESTConfig()}); err != nil {
			t.Fatal(err)
		}
		if spokes[s.Name()], err = client.New(s.RESTConfig(), client.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := spokes["b"].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	if err := spokes["b"].Create(ctx, deployment("taken", 1, nil)); err != nil {
		t.Fatal(err)
	}
	placed := map[string]string{flotillav1.LabelPlacement: "all"}
	for _, d := range []*appsv1.Deployment{deployment("odd", 3, placed), deployment("taken", 2, placed)} {
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("replicas are divided, the remainder to one cluster", func(t *testing.T) {
		fleettest.Eventually(t, 30*time.Second, "odd divided 2+1 over a and b", func() error {
			shares := map[int32]int{}
			for _, cluster := range []string{"a", "b"} {
				d := &appsv1.Deployment{}
				if err := spokes[cluster].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "odd"}, d); err != nil {
					return err
				}
				shares[*d.Spec.Replicas]++
			}
			if shares[2] != 1 || shares[1] != 1 {
				return fmt.Errorf("shares %v", shares)
			}
			return nil
		})
	})

	t.Run("a failed delivery is an Event on the hub object", func(t *testing.T) {
		fleettest.Eventually(t, 30*time.Second, "DeliveryFailed event on shop/taken", func() error {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Name == "taken" && ev.Reason == "DeliveryFailed" && strings.Contains(ev.Message, "b: deployment.apps shop/taken") {
					return nil
				}
			}
			return fmt.Errorf("not among %d events", len(events.Items))
		})
		d := &appsv1.Deployment{}
		if err := spokes["b"].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "taken"}, d); err != nil || *d.Spec.Replicas != 1 {
			t.Fatalf("the spoke's own Deployment was changed: %v", err)
		}
	})

	t.Run("a Placement's overrides change its objects per cluster; a failing rule fails one cluster", func(t *testing.T) {
		tuned := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "tuned", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Overrides: []flotillav1.Override{
				{Name: "mirror-on-b", ClusterNames: []string{"b"}, JSONPatch: []flotillav1.JSONPatchOperation{
					{Op: "replace", Path: "/spec/template/spec/containers/0/image", Value: &apiextensionsv1.JSON{Raw: []byte(`"mirror.example/nginx"`)}}}},
				{Name: "broken-on-a", ClusterNames: []string{"a"}, JSONPatch: []flotillav1.JSONPatchOperation{
					{Op: "replace", Path: "/spec/nothere", Value: &apiextensionsv1.JSON{Raw: []byte(`1`)}}}},
			}}}
		if err := c.Create(ctx, tuned); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, deployment("tuned", 1, map[string]string{flotillav1.LabelPlacement: "tuned"})); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 30*time.Second, "tuned on b with the mirror image", func() error {
			d := &appsv1.Deployment{}
			if err := spokes["b"].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "tuned"}, d); err != nil {
				return err
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "mirror.example/nginx" {
				return fmt.Errorf("image %s", img)
			}
			return nil
		})
		fleettest.Eventually(t, 30*time.Second, "DeliveryFailed event naming the rule", func() error {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Name == "tuned" && ev.Reason == "DeliveryFailed" && strings.Contains(ev.Message, "a: Placement tuned") &&
					strings.Contains(ev.Message, "broken-on-a") {
					return nil
				}
			}
			return fmt.Errorf("not among %d events", len(events.Items))
		})
		if err := spokes["a"].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "tuned"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the object reached the cluster whose rule fails: %v", err)
		}
	})
}
