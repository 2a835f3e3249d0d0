package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, `may deliver only into its own namespace team, not "other"`) {
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
