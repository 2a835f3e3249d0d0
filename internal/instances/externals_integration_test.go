package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// An external reference names an object the user owns: the instance waits until it exists,
// follows its changes, and never writes it; one in another namespace is refused.
func TestInstanceReadsExternalReferences(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.serve(t, "spoke-1", readRGD(t, "testdata/greeting-rgd.yaml"))
	e.namespace(t, "spoke-1", "team")
	e.namespace(t, "spoke-1", "other")
	spoke := e.spokes["spoke-1"]
	state := func(name string) (*unstructured.Unstructured, error) {
		u := newInstance(compiled, "team", name, nil)
		return u, spoke.Get(ctx, client.ObjectKeyFromObject(u), u)
	}
	greeting := func() (string, error) {
		cm := &corev1.ConfigMap{}
		err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "hi-greeting"}, cm)
		return cm.Data["text"], err
	}

	if err := spoke.Create(ctx, newInstance(compiled, "team", "hi", map[string]any{"from": "team"})); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the instance waiting for its reference", func() error {
		u, err := state("hi")
		if err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, `waiting for external reference "settings"`) {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return stateIs(u, kro.StateInProgress)
	})

	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "settings"}, Data: map[string]string{"audience": "world"}}
	if err := spoke.Create(ctx, settings); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the instance ACTIVE once the reference exists", func() error {
		if text, err := greeting(); err != nil || text != "hello, world" {
			return fmt.Errorf("greeting %q (%v)", text, err)
		}
		u, err := state("hi")
		if err != nil {
			return err
		}
		if a, _, _ := unstructured.NestedString(u.Object, "status", "audience"); a != "world" {
			return fmt.Errorf("status.audience %q", a)
		}
		return stateIs(u, kro.StateActive)
	})

	settings.Data["audience"] = "team"
	if err := spoke.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "a change of the reference followed", func() error {
		if text, err := greeting(); err != nil || text != "hello, team" {
			return fmt.Errorf("greeting %q (%v)", text, err)
		}
		return nil
	})
	if w := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == "settings" }); len(w) != 0 {
		t.Errorf("the external reference was written: %s", describe(w))
	}

	if err := spoke.Create(ctx, newInstance(compiled, "team", "peek", map[string]any{"from": "other"})); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "a reference to another namespace refused", func() error {
		u, err := state("peek")
		if err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, `external reference to ConfigMap in namespace "other" not allowed`) {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})
}
