package main

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// userAgent is the soak's own: its writes (hub edits, spoke-side edits) are told apart from
// Flotilla's in the audit logs, which count user agents starting with "flotilla".
const userAgent = "soak-chaos"

// startFleet starts a hub and API-only spokes with audit logs in dir.
func startFleet(ctx context.Context, dir, binDir string, spokes int) (*localfleet.Fleet, error) {
	planes := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub, AuditLog: true}}
	for i := range spokes {
		planes = append(planes, localfleet.PlaneSpec{Name: fmt.Sprintf("spoke-%d", i+1), Role: localfleet.RoleSpoke, AuditLog: true})
	}
	fmt.Printf("starting a hub and %d API-only spokes in %s...\n", spokes, dir)
	return localfleet.Start(ctx, localfleet.Options{Dir: dir, BinDir: binDir, Planes: planes, Parallel: 2, Progress: os.Stdout})
}

// soakConfig is a plane's admin configuration with the soak's user agent.
func soakConfig(p *localfleet.Plane) *rest.Config {
	cfg := p.RESTConfig()
	cfg.UserAgent = userAgent
	return cfg
}

// setUpHub installs Flotilla's CRDs and roles, starts the hub controller, joins the spokes and
// creates the soak's namespace and Placements: "all" chooses every spoke, "divide" too and
// divides transparent-mode workloads' replicas evenly over them.
func setUpHub(ctx context.Context, fleet *localfleet.Fleet, hubs *hubSet) (client.Client, error) {
	hubCfg := soakConfig(fleet.Hub())
	if err := install.ApplyForSelf(ctx, hubCfg, nil); err != nil {
		return nil, fmt.Errorf("install Flotilla on the hub: %w", err)
	}
	hub, err := client.New(hubCfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return nil, err
	}
	for i := range hubs.procs {
		if err := hubs.start(i); err != nil {
			return nil, err
		}
	}
	for _, s := range fleet.Spokes() {
		if err := membership.Join(ctx, hub, membership.JoinOptions{Name: s.Name(), Spoke: s.RESTConfig()}); err != nil {
			return nil, fmt.Errorf("join %s: %w", s.Name(), err)
		}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: allPlacement, Namespace: ns},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: divPlacement, Namespace: ns},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
				Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}}},
	} {
		if err := hub.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return hub, nil
}

// spokeClients are the spokes' admin clients with the soak's user agent.
func spokeClients(fleet *localfleet.Fleet) ([]kubernetes.Interface, error) {
	var out []kubernetes.Interface
	for _, s := range fleet.Spokes() {
		cs, err := kubernetes.NewForConfig(soakConfig(s))
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}
