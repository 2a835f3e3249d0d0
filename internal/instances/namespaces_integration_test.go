package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A child bound for a namespace that does not exist waits for it, as under kro: Flotilla does
// not create the namespace for an instance (it does for a hub owner's objects), since another
// instance is often the one that makes it, as a Tenant's TenantEnvironment makes the namespace
// of its TenantApplication's children. Here a Reader names a namespace a Home makes later: the
// Reader waits, saying why, and nothing creates the namespace until the Home does; then both
// are ACTIVE and the namespace is the Home's.
func TestChildWaitsForItsNamespaceFromAnotherInstance(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	spoke := e.spokes["spoke-1"]
	readers := e.compile(t, "spoke-1", readRGD(t, "testdata/readers-rgd.yaml"))
	homes := e.compile(t, "spoke-1", readRGD(t, "testdata/homes-rgd.yaml"))
	for _, c := range []*kro.Compiled{readers, homes} {
		e.installCRD(t, "spoke-1", c)
		e.graphs.Serve("spoke-1", instances.Graph{Compiled: c, Revision: c.SpecHash(), ClusterWide: true})
	}
	e.namespace(t, "spoke-1", "team")

	get := func(c *kro.Compiled, name string) (*unstructured.Unstructured, error) {
		u := newInstance(c, "team", name, nil)
		return u, spoke.Get(ctx, client.ObjectKeyFromObject(u), u)
	}
	if err := spoke.Create(ctx, newInstance(readers, "team", "r1", map[string]any{"target": "later"})); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "r1 waiting for namespace later", func() error {
		u, err := get(readers, "r1")
		if err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, `namespaces "later" not found`) {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})
	created := func(ev localfleet.AuditEvent) bool {
		return ev.Verb == "create" && ev.ObjectRef.Resource == "namespaces" && ev.ObjectRef.Name == "later"
	}
	if w := e.writes(t, "spoke-1", created); len(w) != 0 {
		t.Fatalf("namespace later created for r1: %s", describe(w))
	}

	if err := spoke.Create(ctx, newInstance(homes, "team", "h1", map[string]any{"namespace": "later"})); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "r1 and h1 ACTIVE, namespace later h1's", func() error {
		h1, err := get(homes, "h1")
		if err != nil {
			return err
		}
		for _, c := range []struct {
			compiled *kro.Compiled
			name     string
		}{{readers, "r1"}, {homes, "h1"}} {
			u, err := get(c.compiled, c.name)
			if err != nil {
				return err
			}
			if err := stateIs(u, kro.StateActive); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		ns := &corev1.Namespace{}
		if err := spoke.Get(ctx, client.ObjectKey{Name: "later"}, ns); err != nil {
			return err
		}
		if got := ns.Labels[kro.InstanceIDLabel]; got != string(h1.GetUID()) {
			return fmt.Errorf("namespace later's %s is %q, h1 is %s", kro.InstanceIDLabel, got, h1.GetUID())
		}
		return nil
	})
}
