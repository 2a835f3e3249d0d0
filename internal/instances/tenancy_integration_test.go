package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// By default an instance's children stay in its own namespace: one that names another is
// refused, the instance shows ERROR saying why, and nothing is written outside its namespace.
// Pointed back at its own namespace, it becomes ACTIVE.
func TestInstanceConfinedToItsNamespace(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.serve(t, "spoke-1", readRGD(t, "testdata/notes-rgd.yaml"))
	e.namespace(t, "spoke-1", "team")
	e.namespace(t, "spoke-1", "other")
	spoke := e.spokes["spoke-1"]

	note := newInstance(compiled, "team", "n1", map[string]any{"target": "other"})
	if err := spoke.Create(ctx, note); err != nil {
		t.Fatal(err)
	}
	get := func() (*unstructured.Unstructured, error) {
		u := newInstance(compiled, "team", "n1", nil)
		return u, spoke.Get(ctx, client.ObjectKeyFromObject(u), u)
	}
	fleettest.Eventually(t, wait, "the instance in ERROR, saying why", func() error {
		u, err := get()
		if err != nil {
			return err
		}
		if err := stateIs(u, kro.StateError); err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, `ConfigMap in namespace "other" not allowed: an instance may read and write only its own namespace "team"`) {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})
	if w := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Namespace == "other" }); len(w) != 0 {
		t.Errorf("writes in another namespace: %s", describe(w))
	}

	u, err := get()
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, "team", "spec", "target")
	if err := spoke.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the instance ACTIVE in its own namespace", func() error {
		u, err := get()
		if err != nil {
			return err
		}
		return stateIs(u, kro.StateActive)
	})
	if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "n1-note"}, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
}

// Served cluster-wide (tenancy Cluster), an instance's children reach its whole cluster: a
// ClusterRole and a ConfigMap in another namespace, and it is ACTIVE. Served confined again, the
// same instance is refused (ERROR) and nothing of it is deleted; cluster-wide once more, deleting
// it removes its children everywhere they went.
func TestClusterWideInstanceReachesItsCluster(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.compile(t, "spoke-1", readRGD(t, "testdata/readers-rgd.yaml"))
	e.installCRD(t, "spoke-1", compiled)
	serve := func(wide bool) {
		e.graphs.Serve("spoke-1", instances.Graph{Compiled: compiled, Revision: compiled.SpecHash(), ClusterWide: wide})
	}
	serve(true)
	e.namespace(t, "spoke-1", "team")
	e.namespace(t, "spoke-1", "other")
	spoke := e.spokes["spoke-1"]

	reader := newInstance(compiled, "team", "r1", map[string]any{"target": "other"})
	if err := spoke.Create(ctx, reader); err != nil {
		t.Fatal(err)
	}
	state := func(want, message string) func() error {
		return func() error {
			u := newInstance(compiled, "team", "r1", nil)
			if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return err
			}
			if err := stateIs(u, want); err != nil {
				return err
			}
			if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, message) {
				return fmt.Errorf("ResourcesReady message %q", msg)
			}
			return nil
		}
	}
	role, note := client.ObjectKey{Name: "r1-reader"}, client.ObjectKey{Namespace: "other", Name: "r1-note"}
	fleettest.Eventually(t, wait, "r1 ACTIVE", state(kro.StateActive, ""))
	for _, obj := range []struct {
		key client.ObjectKey
		obj client.Object
	}{{role, &rbacv1.ClusterRole{}}, {note, &corev1.ConfigMap{}}} {
		if err := spoke.Get(ctx, obj.key, obj.obj); err != nil {
			t.Fatal(err)
		}
		if obj.obj.GetLabels()[flotillav1.LabelOwner] == "" {
			t.Errorf("%s carries no Flotilla marker", obj.key)
		}
	}

	serve(false)
	fleettest.Eventually(t, wait, "r1 refused once confined", state(kro.StateError, "cluster-scoped on this cluster"))
	if w := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" }); len(w) != 0 {
		t.Errorf("deleted while confined: %s", describe(w))
	}

	serve(true)
	fleettest.Eventually(t, wait, "r1 ACTIVE again", state(kro.StateActive, ""))
	if err := spoke.Delete(ctx, reader); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "r1's children gone", func() error {
		for _, key := range []client.ObjectKey{role, note} {
			var obj client.Object = &corev1.ConfigMap{}
			if key == role {
				obj = &rbacv1.ClusterRole{}
			}
			if err := spoke.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s still there (%v)", key, err)
			}
		}
		return nil
	})
}

// An instance of a cluster-scoped kind is refused under the default tenancy (ERROR, nothing
// written), and expanded once served cluster-wide: a ClusterRole and a ConfigMap in the
// namespace it names, its status field computed from them. Deleted, it takes them with it.
func TestClusterScopedInstanceServedClusterWide(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.compile(t, "spoke-1", readRGD(t, "testdata/tenants-rgd.yaml"))
	if compiled.Namespaced() {
		t.Fatal("the Tenant kind compiled namespaced")
	}
	e.installCRD(t, "spoke-1", compiled)
	serve := func(wide bool) {
		e.graphs.Serve("spoke-1", instances.Graph{Compiled: compiled, Revision: compiled.SpecHash(), ClusterWide: wide})
	}
	serve(false)
	e.namespace(t, "spoke-1", "team")
	spoke := e.spokes["spoke-1"]
	tenant := newInstance(compiled, "", "acme", map[string]any{"home": "team", "owner": "ops"})
	if err := spoke.Create(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	get := func() (*unstructured.Unstructured, error) {
		u := newInstance(compiled, "", "acme", nil)
		return u, spoke.Get(ctx, client.ObjectKeyFromObject(u), u)
	}
	fleettest.Eventually(t, wait, "acme refused under the default tenancy", func() error {
		u, err := get()
		if err != nil {
			return err
		}
		if err := stateIs(u, kro.StateError); err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, "tenancy: Cluster") {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})
	children := func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == "tenant-acme" }
	if w := e.writes(t, "spoke-1", children); len(w) != 0 {
		t.Errorf("a refused cluster-scoped instance wrote: %s", describe(w))
	}

	serve(true)
	fleettest.Eventually(t, wait, "acme ACTIVE, its role in status", func() error {
		u, err := get()
		if err != nil {
			return err
		}
		if err := stateIs(u, kro.StateActive); err != nil {
			return err
		}
		if role, _, _ := unstructured.NestedString(u.Object, "status", "role"); role != "tenant-acme" {
			return fmt.Errorf("status.role %q", role)
		}
		return nil
	})
	role, settings := client.ObjectKey{Name: "tenant-acme"}, client.ObjectKey{Namespace: "team", Name: "tenant-acme"}
	cm := &corev1.ConfigMap{}
	if err := spoke.Get(ctx, settings, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["owner"] != "ops" || cm.Labels[flotillav1.LabelOwner] == "" {
		t.Errorf("settings: data %v, labels %v", cm.Data, cm.Labels)
	}
	if err := spoke.Get(ctx, role, &rbacv1.ClusterRole{}); err != nil {
		t.Fatal(err)
	}

	u, err := get()
	if err != nil {
		t.Fatal(err)
	}
	if err := spoke.Delete(ctx, u); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "acme and its children gone", func() error {
		if _, err := get(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("acme still there (%v)", err)
		}
		if err := spoke.Get(ctx, settings, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("settings still there (%v)", err)
		}
		if err := spoke.Get(ctx, role, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("role still there (%v)", err)
		}
		return nil
	})
}
