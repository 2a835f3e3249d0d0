package instances_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A spoke that ran kro before its API was served from the hub: the CRD is there, and so are an
// instance and a child kro applied for it (kro's labels, its ApplySet's mark, no Flotilla
// marker). Once the hub serves the API, the child is taken over as it is (never deleted or
// created again: the spoke's audit log), carries Flotilla's markers, and the instance reaches
// ACTIVE. An object of the same name that is not the instance's (no mark of its ApplySet) is not
// taken: that instance is in ERROR saying so, and the object is left as it was.
func TestInstanceTakenOverFromKro(t *testing.T) {
	e := startEnv(t, "spoke-1")
	ctx := context.Background()
	compiled := e.compile(t, "spoke-1", readRGD(t, "testdata/webapp-rgd.yaml"))
	e.installCRD(t, "spoke-1", compiled)
	e.namespace(t, "spoke-1", "team")
	spoke := e.spokes["spoke-1"]

	shop := newInstance(compiled, "team", "shop", map[string]any{"name": "shop"})
	stray := newInstance(compiled, "team", "stray", map[string]any{"name": "stray"})
	configs := map[string]*corev1.ConfigMap{}
	for _, inst := range []*unstructured.Unstructured{shop, stray} {
		if err := spoke.Create(ctx, inst); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{"unrelated": "true"}
		if inst == shop { // what kro put on the child it applied for shop
			labels = map[string]string{kro.ApplySetPartOfLabel: kro.ApplySetID(inst), kro.OwnedLabel: "true", kro.NodeIDLabel: "config",
				kro.InstanceNameLabel: inst.GetName(), kro.InstanceNamespaceLabel: inst.GetNamespace()}
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: inst.GetName() + "-config", Labels: labels},
			Data: map[string]string{"message": "hello"}}
		if err := spoke.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		configs[inst.GetName()] = cm
	}

	e.graphs.Serve("spoke-1", instances.Graph{Compiled: compiled, Revision: compiled.SpecHash()})
	fleettest.Eventually(t, wait, "shop's ConfigMap taken over, its Deployment applied", func() error {
		cm := &corev1.ConfigMap{}
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(configs["shop"]), cm); err != nil {
			return err
		}
		if cm.UID != configs["shop"].UID {
			return fmt.Errorf("the ConfigMap was recreated: uid %s, was %s", cm.UID, configs["shop"].UID)
		}
		if cm.Labels[flotillav1.LabelOwner] == "" {
			return fmt.Errorf("not taken over: labels %v", cm.Labels)
		}
		return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &appsv1.Deployment{})
	})
	fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "team", Name: "shop"})
	fleettest.Eventually(t, wait, "shop ACTIVE", func() error {
		u := newInstance(compiled, "team", "shop", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		return stateIs(u, kro.StateActive)
	})
	fleettest.Eventually(t, wait, "stray in ERROR, naming the conflict", func() error {
		u := newInstance(compiled, "team", "stray", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		if err := stateIs(u, kro.StateError); err != nil {
			return err
		}
		if msg := fmt.Sprint(condition(u, "ResourcesReady")["message"]); !strings.Contains(msg, "not created by Flotilla") {
			return fmt.Errorf("ResourcesReady message %q", msg)
		}
		return nil
	})

	left := &corev1.ConfigMap{}
	if err := spoke.Get(ctx, client.ObjectKeyFromObject(configs["stray"]), left); err != nil {
		t.Fatal(err)
	}
	if left.ResourceVersion != configs["stray"].ResourceVersion {
		t.Errorf("the ConfigMap that is not stray's was changed: %v", left.Labels)
	}
	if w := e.writes(t, "spoke-1", func(ev localfleet.AuditEvent) bool {
		return ev.ObjectRef.Resource == "configmaps" && (ev.Verb == "delete" || ev.Verb == "create")
	}); len(w) != 0 {
		t.Errorf("ConfigMaps deleted or created instead of taken over: %s", describe(w))
	}
}
