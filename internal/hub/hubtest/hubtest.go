// Package hubtest runs Flotilla's hub controller inside a test, against a localfleet hub, and
// stops it when the test ends: the setup every integration test of the pipeline shares.
package hubtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"

	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// ProbeInterval is how often the test controller probes spokes: fast, so that tests of
// reachability take seconds.
const ProbeInterval = 500 * time.Millisecond

// Install puts Flotilla's CRDs on the fleet's hub and returns a client for the hub.
func Install(t testing.TB, fleet *localfleet.Fleet) client.Client {
	t.Helper()
	cfg := fleet.Hub().RESTConfig()
	// The controller runs as the hub's admin (Run): only that identity may write Delivery
	// records.
	if err := install.ApplyForSelf(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	waitDeliveryPolicy(t, cfg)
	return c
}

// waitDeliveryPolicy waits until the API server enforces the policy that keeps Delivery records
// to the controller: it compiles a new policy within a second or so, and a test that checks
// the policy right after the install would otherwise race it. The probe is a dry run by a user
// whom only the policy can refuse (system:masters passes authorization).
func waitDeliveryPolicy(t testing.TB, cfg *rest.Config) {
	t.Helper()
	probe, err := client.New(fleettest.As(cfg, "flotilla-policy-probe", "system:masters"), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	record := &flotillav1.Delivery{
		ObjectMeta: metav1.ObjectMeta{Name: "propagation.policy-probe.none", Namespace: metav1.NamespaceDefault},
		Spec: flotillav1.DeliverySpec{
			Owner:   flotillav1.DeliveryOwner{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Namespace: metav1.NamespaceDefault, Name: "policy-probe"},
			Cluster: "none", Kinds: []string{"/v1/Namespace"},
		},
	}
	fleettest.Eventually(t, time.Minute, "the Delivery policy in effect", func() error {
		err := probe.Create(context.Background(), record.DeepCopy(), client.DryRunAll)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "only the hub controller") {
			return nil
		}
		return fmt.Errorf("a dry-run create of a Delivery by another user: %v", err)
	})
}

// Controller is a hub controller running in the test process.
type Controller struct {
	t      testing.TB
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// Run starts the hub controller against the fleet's hub; it is stopped when the test ends, or
// earlier by Stop. tune changes the test's options (fast probes, no metrics or health servers).
func Run(t testing.TB, fleet *localfleet.Fleet, tune ...func(*hub.Options)) *Controller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Controller{t: t, cancel: cancel, done: make(chan error, 1)}
	opts := hub.Options{MetricsAddr: "0", HealthAddr: "0", Inventory: inventory.Options{ProbeInterval: ProbeInterval}}
	for _, f := range tune {
		f(&opts)
	}
	go func() {
		c.done <- hub.Run(ctx, fleet.Hub().RESTConfig(), opts)
	}()
	t.Cleanup(c.Stop)
	return c
}

// Stop stops the controller and reports an error it ended with. Stopping twice does nothing.
func (c *Controller) Stop() {
	c.once.Do(func() {
		c.cancel()
		if err := <-c.done; err != nil {
			c.t.Errorf("hub controller: %v", err)
		}
	})
}
