package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestPropagationWithKubectl is the user's path through the propagation engine, with kubectl
// against the hub and the spokes: a CRD, a custom resource and a Deployment reach their
// clusters; relabelling clusters moves the Deployment (added on the new cluster before it is
// removed from the old one); Orphan leaves it behind when the Propagation is deleted.
func TestPropagationWithKubectl(t *testing.T) {
	flotilla, fleet := startJoinedFleet(t)
	hubKC := fleet.Hub().KubeconfigPath()
	mustKubectl(t, hubKC, "apply", "-f", "testdata/fleet-demo.yaml")
	// The hub serves the CRD now; its custom resource can follow.
	mustKubectl(t, hubKC, "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s")
	mustKubectl(t, hubKC, "apply", "-f", "testdata/widget.yaml")

	kc := func(spoke string) string { return fleet.Plane(spoke).KubeconfigPath() }
	for _, s := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		eventuallyKubectl(t, kc(s), "3", "get", "widget", "w1", "-n", "demo", "-o", "jsonpath={.spec.size}")
	}
	mustKubectl(t, kc("spoke-1"), "wait", "--for=condition=Available", "deployment/web", "-n", "demo", "--timeout=90s")
	assertAbsent(t, kc("spoke-2"), "deployment", "web", "-n", "demo")
	eventuallyKubectl(t, hubKC, "Applied 3", "get", "clusterpropagation", "widgets", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)
	eventuallyKubectl(t, hubKC, "Applied 1 Ready 1", "get", "propagation", "web", "-n", "demo", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters} {.status.conditions[?(@.type=="Ready")].reason} {.status.readyClusters}`)

	status := runFlotilla(t, flotilla, hubKC, "status", "web", "-n", "demo")
	for _, want := range []string{"Propagation demo/web: 1 objects, 1 clusters chosen, 1 applied, 1 ready, 0 failed", "Applied  True", "CLUSTER", "spoke-1"} {
		if !strings.Contains(status, want) {
			t.Errorf("flotilla status lacks %q:\n%s", want, status)
		}
	}
	if cs := runFlotilla(t, flotilla, hubKC, "status", "clusterpropagation/widgets"); !strings.Contains(cs, "3 applied") {
		t.Errorf("flotilla status clusterpropagation/widgets:\n%s", cs)
	}

	// Move the Deployment from spoke-1 to spoke-2 by relabelling the clusters.
	mustKubectl(t, hubKC, "label", "cluster", "spoke-2", "region=eu-west", "--overwrite")
	mustKubectl(t, hubKC, "label", "cluster", "spoke-1", "region=us-east", "--overwrite")
	eventuallyKubectl(t, kc("spoke-2"), "2", "get", "deployment", "web", "-n", "demo", "-o", "jsonpath={.status.availableReplicas}")
	fleettest.Eventually(t, 60*time.Second, "deployment web removed from spoke-1", func() error {
		out, err := kubectl(t, kc("spoke-1"), "get", "deployment", "web", "-n", "demo", "--ignore-not-found", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("still there: %q %v", out, err)
		}
		return nil
	})
	eventuallyKubectl(t, hubKC, "Applied 1", "get", "propagation", "web", "-n", "demo", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)

	// Orphan: deleting the Propagation leaves the Deployment running.
	mustKubectl(t, hubKC, "patch", "propagation", "web", "-n", "demo", "--type=merge", "-p", `{"spec":{"strategy":{"deletion":"Orphan"}}}`)
	mustKubectl(t, hubKC, "delete", "propagation", "web", "-n", "demo", "--timeout=60s")
	mustKubectl(t, kc("spoke-2"), "get", "deployment", "web", "-n", "demo")

	// Delete (the default): deleting the ClusterPropagation removes the custom resources.
	mustKubectl(t, hubKC, "delete", "clusterpropagation", "widgets", "--timeout=60s")
	for _, s := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		assertAbsent(t, kc(s), "crd", "widgets.example.com")
	}
}

// TestTransparentDeployment: an ordinary Deployment labelled with a Placement runs across the
// fleet, its replicas divided, and the hub Deployment's own status shows the fleet-wide count;
// changing the label moves it.
func TestTransparentDeployment(t *testing.T) {
	_, fleet := startJoinedFleet(t)
	hubKC := fleet.Hub().KubeconfigPath()
	mustKubectl(t, hubKC, "apply", "-f", "testdata/transparent.yaml")
	kc := func(spoke string) string { return fleet.Plane(spoke).KubeconfigPath() }
	for _, s := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		eventuallyKubectl(t, kc(s), "2", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.status.availableReplicas}")
	}
	// kubectl's READY column on the hub: ready replicas across the fleet / spec.replicas.
	fleettest.Eventually(t, 30*time.Second, "hub deployment READY 6/6", func() error {
		out, err := kubectl(t, hubKC, "get", "deployment", "cart", "-n", "shop", "--no-headers")
		if err != nil || !strings.Contains(out, "6/6") {
			return fmt.Errorf("%q %v", out, err)
		}
		return nil
	})
	eventuallyKubectl(t, hubKC, "True", "get", "deployment", "cart", "-n", "shop", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)

	// The Service and the Job arrive without what the hub allocated for them: each spoke gives
	// the Service a ClusterIP from its own range, and the Job runs to completion there.
	hubIP := mustKubectl(t, hubKC, "get", "service", "cart", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}")
	for _, s := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		fleettest.Eventually(t, 60*time.Second, "service cart on "+s+" with its own ClusterIP", func() error {
			ip, err := kubectl(t, kc(s), "get", "service", "cart", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}")
			if err != nil || ip == "" || ip == hubIP {
				return fmt.Errorf("clusterIP %q (the hub's is %s): %v", ip, hubIP, err)
			}
			return nil
		})
		eventuallyKubectl(t, kc(s), "1", "get", "job", "migrate", "-n", "shop", "-o", "jsonpath={.status.succeeded}")
	}

	// A Propagation's Deployment divided by weight (examples/weighted.yaml): 12 replicas over
	// eu-west, us-east and ap-south at 1:2:3.
	mustKubectl(t, hubKC, "apply", "-f", "../../examples/weighted.yaml")
	for s, n := range map[string]string{"spoke-1": "2", "spoke-2": "4", "spoke-3": "6"} {
		eventuallyKubectl(t, kc(s), n, "get", "deployment", "checkout", "-n", "checkout", "-o", "jsonpath={.status.availableReplicas}")
	}

	// Move it to the us-east cluster only by changing its label. Leaving two of its three
	// clusters at once is more than the fleet prune budget allows: the new copy comes, the old
	// ones stay until the confirmation a PruneBlocked Event names is given, as printed.
	mustKubectl(t, hubKC, "label", "deployment", "cart", "-n", "shop", "flotilla.dev/placement=us", "--overwrite")
	eventuallyKubectl(t, kc("spoke-2"), "6", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.status.availableReplicas}")
	var confirm string
	fleettest.Eventually(t, 60*time.Second, "a PruneBlocked Event on the hub Deployment naming the confirmation", func() error {
		out, err := kubectl(t, hubKC, "get", "events", "-n", "shop", "--field-selector", "reason=PruneBlocked,involvedObject.name=cart",
			"-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
		for _, msg := range strings.Split(out, "\n") {
			if _, command, found := strings.Cut(msg, "with: "); found && strings.Contains(msg, "from 2 of the 3 clusters") {
				confirm = command
				return nil
			}
		}
		return fmt.Errorf("%q %v", out, err)
	})
	mustKubectl(t, hubKC, strings.Fields(confirm)[1:]...)
	assertAbsent(t, kc("spoke-1"), "deployment", "cart", "-n", "shop")
	assertAbsent(t, kc("spoke-3"), "deployment", "cart", "-n", "shop")

	// Deleting the hub Deployment removes it from the fleet.
	mustKubectl(t, hubKC, "delete", "deployment", "cart", "-n", "shop", "--timeout=60s")
	assertAbsent(t, kc("spoke-2"), "deployment", "cart", "-n", "shop")
}
