package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestDeploymentSurvivesSpokeRestart runs a Deployment to Available on a full spoke with kubectl,
// stops that spoke and sees it unreachable while the other spoke keeps answering, then starts
// it again and finds the Deployment still there and Available.
func TestDeploymentSurvivesSpokeRestart(t *testing.T) {
	fleet := fleettest.Start(t,
		fleettest.Hub(),
		fleettest.FullSpoke("spoke-1", map[string]string{"region": "eu-west"}),
		fleettest.FullSpoke("spoke-2", map[string]string{"region": "us-east"}),
	)
	spoke1, spoke2 := fleet.Plane("spoke-1"), fleet.Plane("spoke-2")
	kc1, kc2 := spoke1.KubeconfigPath(), spoke2.KubeconfigPath()

	nodes := mustKubectl(t, kc1, "get", "nodes", "-l", "region=eu-west", "-o", "name")
	if got := strings.Count(nodes, "node/"); got != 2 {
		t.Fatalf("spoke-1 has %d fake nodes labelled region=eu-west, want 2:\n%s", got, nodes)
	}

	mustKubectl(t, kc1, "create", "deployment", "web", "--image=nginx", "--replicas=2")
	mustKubectl(t, kc1, "wait", "--for=condition=Available", "deployment/web", "--timeout=90s")
	if got := mustKubectl(t, kc1, "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}"); got != "2" {
		t.Fatalf("availableReplicas = %q, want 2", got)
	}

	spoke1.Stop()
	out, err := kubectl(t, kc1, "get", "deployment", "web", "--request-timeout=5s")
	if err == nil {
		t.Fatalf("a stopped spoke answered kubectl:\n%s", out)
	}
	if !strings.Contains(out, "refused") {
		t.Fatalf("kubectl against a stopped spoke should say the connection was refused, got:\n%s", out)
	}
	mustKubectl(t, kc2, "get", "nodes") // the other spoke is unaffected

	if err := spoke1.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 90*time.Second, "deployment web Available again after restart", func() error {
		out, err := kubectl(t, kc1, "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if out != "2" {
			return fmt.Errorf("availableReplicas = %q", out)
		}
		return nil
	})
}
