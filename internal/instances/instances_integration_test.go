package instances_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// An instance created on a spoke is expanded there, and only there: its children appear in
// its namespace with kro's labels, in dependency order; it reaches ACTIVE once they are ready,
// with status fields computed from them; a steady state costs no write; deleting it removes
// its children in reverse apply order and then lets it go.
func TestInstanceExpandedOnItsSpoke(t *testing.T) {
	e := startEnv(t, "spoke-1", "spoke-2")
	ctx := context.Background()
	rgd := readRGD(t, "testdata/webapp-rgd.yaml")
	compiled := e.serve(t, "spoke-1", rgd)
	e.serve(t, "spoke-2", rgd)
	e.namespace(t, "spoke-1", "team")
	spoke := e.spokes["spoke-1"]

	shop := newInstance(compiled, "team", "shop", map[string]any{"name": "shop", "message": "hi"})
	if err := spoke.Create(ctx, shop); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(shop)
	get := func() *unstructured.Unstructured {
		t.Helper()
		u := newInstance(compiled, "team", "shop", nil)
		if err := spoke.Get(ctx, key, u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	t.Run("children appear in the instance's namespace with kro's labels, in dependency order", func(t *testing.T) {
		deployment := &appsv1.Deployment{}
		fleettest.Eventually(t, wait, "the Deployment, after its ConfigMap", func() error {
			return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, deployment)
		})
		cm := &corev1.ConfigMap{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop-config"}, cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data["message"] != "hi" {
			t.Errorf("ConfigMap data %v", cm.Data)
		}
		instance := get()
		for _, obj := range []client.Object{cm, deployment} {
			l := obj.GetLabels()
			if l[kro.OwnedLabel] != "true" || l[kro.InstanceNameLabel] != "shop" || l[kro.InstanceIDLabel] != string(instance.GetUID()) ||
				l[kro.ApplySetPartOfLabel] != instance.GetLabels()[kro.ApplySetIDLabel] || l[kro.NodeIDLabel] == "" {
				t.Errorf("%s %s labels %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), l)
			}
			if obj.GetAnnotations()[kro.ApplyOrderAnnotation] == "" {
				t.Errorf("%s has no apply order", obj.GetName())
			}
		}
		if !cm.CreationTimestamp.Before(&deployment.CreationTimestamp) && !cm.CreationTimestamp.Equal(&deployment.CreationTimestamp) {
			t.Errorf("the Deployment was created before the ConfigMap it depends on")
		}
		// The Service depends on the Deployment being ready: not there yet.
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			t.Errorf("the Service exists before the Deployment is ready: %v", err)
		}
		if !slices.Contains(instance.GetFinalizers(), kro.Finalizer) || instance.GetLabels()[kro.RGDNameLabel] != rgd.Name ||
			instance.GetAnnotations()[kro.ApplySetToolingAnnotation] != "kro/"+kro.Version {
			t.Errorf("instance metadata: finalizers %v labels %v annotations %v", instance.GetFinalizers(), instance.GetLabels(), instance.GetAnnotations())
		}
		fleettest.Eventually(t, wait, "the instance IN_PROGRESS", func() error { return stateIs(get(), kro.StateInProgress) })
	})

	t.Run("nothing reaches the other spoke", func(t *testing.T) {
		for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}} {
			if err := e.spokes["spoke-2"].List(ctx, list, client.HasLabels{kro.InstanceNameLabel}); err != nil {
				t.Fatal(err)
			}
			if n := len(mustItems(t, list)); n != 0 {
				t.Errorf("spoke-2 has %d %T of an instance", n, list)
			}
		}
	})

	t.Run("ACTIVE once the children are ready, with status fields from them", func(t *testing.T) {
		fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "team", Name: "shop"})
		fleettest.Eventually(t, wait, "the instance ACTIVE", func() error {
			instance := get()
			if err := stateIs(instance, kro.StateActive); err != nil {
				return err
			}
			if n, _, _ := unstructured.NestedInt64(instance.Object, "status", "availableReplicas"); n != 1 {
				return fmt.Errorf("status.availableReplicas = %d", n)
			}
			if ep, _, _ := unstructured.NestedString(instance.Object, "status", "endpoint"); ep != "shop.team" {
				return fmt.Errorf("status.endpoint = %q", ep)
			}
			if c := condition(instance, "Ready"); c["status"] != "True" {
				return fmt.Errorf("Ready %v", c)
			}
			return nil
		})
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &corev1.Service{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a steady state costs no write", func(t *testing.T) {
		since := time.Now()
		// The user edits the instance's labels (a reconcile), and everything delivered is
		// confirmed again (as after a restart); a second instance, expanded meanwhile, shows
		// that both were handled.
		instance := get()
		instance.SetLabels(map[string]string{"edited": "yes"})
		if err := spoke.Patch(ctx, instance, client.Merge); err != nil {
			t.Fatal(err)
		}
		e.deliverer.Retry("spoke-1")
		marker := newInstance(compiled, "team", "marker", map[string]any{"name": "marker"})
		if err := spoke.Create(ctx, marker); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the marker's Deployment", func() error {
			return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "marker"}, &appsv1.Deployment{})
		})
		fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "team", Name: "marker"})
		fleettest.Eventually(t, wait, "the marker ACTIVE", func() error {
			u := newInstance(compiled, "team", "marker", nil)
			if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return err
			}
			return stateIs(u, kro.StateActive)
		})
		notMarker := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool {
			return !ev.StageTimestamp.Before(since) && !slices.Contains([]string{"marker", "marker-config"}, ev.ObjectRef.Name)
		})
		if len(notMarker) != 0 {
			t.Errorf("writes for the steady instance: %s", describe(notMarker))
		}
		before := len(e.writes(t, "spoke-1", func(localfleet.AuditEvent) bool { return true }))
		fleettest.Consistently(t, 3*time.Second, "no writes once everything is ACTIVE", func() error {
			if after := e.writes(t, "spoke-1", func(localfleet.AuditEvent) bool { return true }); len(after) != before {
				return fmt.Errorf("new writes: %s", describe(after[before:]))
			}
			return nil
		})
		if n := len(e.writes(t, "spoke-2", func(localfleet.AuditEvent) bool { return true })); n != 0 {
			t.Errorf("%d writes to spoke-2, where no instance exists", n)
		}
	})

	t.Run("metadata someone takes away is put back", func(t *testing.T) {
		patch := []byte(`{"metadata":{"finalizers":null,"labels":{"` + kro.OwnedLabel + `":null}}}`)
		if err := spoke.Patch(ctx, get(), client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the finalizer and label back", func() error {
			u := get()
			if !slices.Contains(u.GetFinalizers(), kro.Finalizer) || u.GetLabels()[kro.OwnedLabel] != "true" {
				return fmt.Errorf("finalizers %v labels %v", u.GetFinalizers(), u.GetLabels())
			}
			return nil
		})
	})

	t.Run("a new revision of the graph expands every instance again", func(t *testing.T) {
		changed := rgd.DeepCopy()
		for _, r := range changed.Spec.Resources {
			if r.ID == "config" {
				r.Template.Raw = []byte(strings.Replace(string(r.Template.Raw), `"message":`, `"revision":"2","message":`, 1))
			}
		}
		e.serveCompiled(t, "spoke-1", changed)
		for _, name := range []string{"shop-config", "marker-config"} {
			fleettest.Eventually(t, wait, name+" at the new revision", func() error {
				cm := &corev1.ConfigMap{}
				if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, cm); err != nil {
					return err
				}
				if cm.Data["revision"] != "2" {
					return fmt.Errorf("data %v", cm.Data)
				}
				return nil
			})
		}
	})

	t.Run("deleting the instance removes its children in reverse order, then the finalizer", func(t *testing.T) {
		since := time.Now()
		if err := spoke.Delete(ctx, get()); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the instance gone", func() error {
			u := newInstance(compiled, "team", "shop", nil)
			if err := spoke.Get(ctx, key, u); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v): state %v", err, u.Object["status"])
			}
			return nil
		})
		var order []string
		for _, ev := range e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool {
			return !ev.StageTimestamp.Before(since) && ev.ObjectRef.Namespace == "team" && ev.ObjectRef.Name != "marker" && ev.ObjectRef.Name != "marker-config"
		}) {
			switch {
			case ev.Verb == "delete":
				order = append(order, "delete "+ev.ObjectRef.Resource)
			case ev.ObjectRef.Name == "shop" && ev.ObjectRef.Resource == compiled.InstanceResource().Resource && !strings.Contains(ev.RequestURI, "/status"):
				order = append(order, "release")
			}
		}
		want := []string{"delete services", "delete deployments", "delete configmaps", "release"}
		if !slices.Equal(order, want) {
			t.Errorf("deletion writes %v, want %v", order, want)
		}
		for _, obj := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}, &corev1.Service{}} {
			name := "shop"
			if _, ok := obj.(*corev1.ConfigMap); ok {
				name = "shop-config"
			}
			if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s still there: %v", obj, name, err)
			}
		}
		// The other instance keeps its children.
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "marker"}, &corev1.Service{}); err != nil {
			t.Errorf("the marker lost its Service: %v", err)
		}
	})
}

func stateIs(instance *unstructured.Unstructured, want string) error {
	if got, _, _ := unstructured.NestedString(instance.Object, "status", "state"); got != want {
		return fmt.Errorf("state %q, want %q; conditions %v", got, want, instance.Object["status"])
	}
	return nil
}

func condition(instance *unstructured.Unstructured, conditionType string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(instance.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			return m
		}
	}
	return nil
}

func mustItems(t *testing.T, list client.ObjectList) []any {
	t.Helper()
	switch l := list.(type) {
	case *corev1.ConfigMapList:
		return anySlice(l.Items)
	case *appsv1.DeploymentList:
		return anySlice(l.Items)
	case *corev1.ServiceList:
		return anySlice(l.Items)
	}
	t.Fatalf("unexpected list %T", list)
	return nil
}

func anySlice[T any](items []T) []any {
	out := make([]any, len(items))
	for i := range items {
		out[i] = items[i]
	}
	return out
}
