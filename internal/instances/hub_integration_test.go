package instances_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// The hub controller expands instances when it is given a Graphs: the deliverer's results reach
// the instance controller, and an instance goes from creation to ACTIVE and away.
func TestHubExpandsInstances(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-1"))
	hubClient := hubtest.Install(t, fleet)
	graphs := instances.NewMemory()
	hubtest.Run(t, fleet, func(o *hub.Options) { o.Graphs = graphs })
	ctx := context.Background()
	if err := membership.Join(ctx, hubClient, membership.JoinOptions{Name: "spoke-1", Spoke: fleet.Plane("spoke-1").RESTConfig()}); err != nil {
		t.Fatal(err)
	}
	spoke, err := client.New(fleet.Plane("spoke-1").RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{fleet: fleet, spokes: map[string]client.Client{"spoke-1": spoke}, graphs: graphs}
	compiled := e.serve(t, "spoke-1", readRGD(t, "testdata/webapp-rgd.yaml"))
	e.namespace(t, "spoke-1", "team")

	shop := newInstance(compiled, "team", "shop", map[string]any{"name": "shop"})
	if err := spoke.Create(ctx, shop); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the Deployment", func() error {
		return spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &appsv1.Deployment{})
	})
	fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "team", Name: "shop"})
	fleettest.Eventually(t, wait, "the instance ACTIVE", func() error {
		u := newInstance(compiled, "team", "shop", nil)
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		return stateIs(u, kro.StateActive)
	})
	if err := spoke.Delete(ctx, shop); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the instance and its children gone", func() error {
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(shop), newInstance(compiled, "team", "shop", nil)); !apierrors.IsNotFound(err) {
			return fmt.Errorf("instance still there (%v)", err)
		}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop-config"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ConfigMap still there (%v)", err)
		}
		return nil
	})
}
