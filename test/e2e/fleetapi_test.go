package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestFleetAPIInstance follows examples/fleet-api.yaml on three full spokes: the RGD applied on
// the hub becomes the WebService CRD on every spoke; a WebService created with kubectl on
// spoke-2 is expanded there by the hub into its Deployment and Service (on spoke-2 only),
// reaches kro's ACTIVE state once the Deployment is Available, and shows the status field
// computed from it; deleted, its children go with it.
func TestFleetAPIInstance(t *testing.T) {
	flotilla, fleet := startJoinedFleet(t)
	hubKC := fleet.Hub().KubeconfigPath()
	kc := func(spoke string) string { return fleet.Plane(spoke).KubeconfigPath() }
	mustKubectl(t, hubKC, "apply", "-f", "../../examples/fleet-api.yaml")
	for _, spoke := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		eventuallyKubectl(t, kc(spoke), "True", "get", "crd", "webservices.kro.run", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
	}
	eventuallyKubectl(t, hubKC, "3", "get", "apipropagation", "public-apis", "-o", "jsonpath={.status.servingClusters}")

	mustKubectl(t, kc("spoke-2"), "create", "namespace", "shop")
	mustKubectl(t, kc("spoke-2"), "create", "-f", "testdata/webservice.yaml")
	eventuallyKubectl(t, kc("spoke-2"), "ACTIVE 2", "get", "webservice", "cart", "-n", "shop", "-o", "jsonpath={.status.state} {.status.availableReplicas}")
	eventuallyKubectl(t, kc("spoke-2"), "2/2", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.spec.replicas}/{.status.availableReplicas}")
	mustKubectl(t, kc("spoke-2"), "get", "service", "cart", "-n", "shop")
	// flotilla status rgd/NAME prints the fleet-wide view: spoke-2 serves the API with the one
	// ACTIVE instance (counts reach the hub within a couple of seconds).
	servingLine := regexp.MustCompile(`(?m)^spoke-2\s+Serving\s+1\s+1\s+1\s+0\s+0\s`)
	fleettest.Eventually(t, 60*time.Second, "flotilla status rgd/webservice.kro.run shows spoke-2's ACTIVE instance", func() error {
		out, err := exec.Command(flotilla, "status", "rgd/webservice.kro.run", "--hub-kubeconfig", hubKC).CombinedOutput()
		if err != nil || !servingLine.Match(out) || !strings.Contains(string(out), "instances: 1 (1 active") {
			return fmt.Errorf("%v:\n%s", err, out)
		}
		return nil
	})
	for _, other := range []string{"spoke-1", "spoke-3"} {
		if out, err := kubectl(t, kc(other), "get", "deployments", "-A", "-l", "kro.run/instance-name=cart", "-o", "jsonpath={.items[*].metadata.name}"); err != nil || out != "" {
			t.Errorf("%s has children of an instance on spoke-2: %q (%v)", other, out, err)
		}
	}

	mustKubectl(t, kc("spoke-2"), "delete", "webservice", "cart", "-n", "shop", "--wait=true", "--timeout=60s")
	eventuallyKubectl(t, kc("spoke-2"), "", "get", "deployments,services", "-n", "shop", "-l", "kro.run/instance-name=cart", "-o", "jsonpath={.items[*].metadata.name}")
}
