package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestFailoverExample follows examples/failover.yaml as its header tells a user of the dev
// fleet: 8 replicas divided 2/2/4 by region; spoke-3's API server paused (kill -STOP of the pid
// in its plane directory) → after clusterUnhealthyAfter spoke-3 is FailedOver and the others run
// 4 each; resumed → its copy, the same object, is scaled to 0, then after failbackAfter it takes
// its 4 back and the others return to 2.
//
// Pods take podReadyDelay to become Ready, and the fleet's available replicas are sampled from
// the resume to the end: trimming the stranded copy and failing back never take them below 8.
func TestFailoverExample(t *testing.T) {
	_, fleet := startFleet(t, podReadyDelay, map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east", "spoke-3": "ap-south"})
	hubKC := fleet.Hub().KubeconfigPath()
	kc := func(spoke string) string { return fleet.Plane(spoke).KubeconfigPath() }
	available := func(spoke, want string) {
		t.Helper()
		eventuallyKubectl(t, kc(spoke), want, "get", "deployment", "payments", "-n", "payments", "-o", "jsonpath={.status.availableReplicas}")
	}
	mustKubectl(t, hubKC, "apply", "-f", "../../examples/failover.yaml")
	for spoke, n := range map[string]string{"spoke-1": "2", "spoke-2": "2", "spoke-3": "4"} {
		available(spoke, n)
	}
	uid := mustKubectl(t, kc("spoke-3"), "get", "deployment", "payments", "-n", "payments", "-o", "jsonpath={.metadata.uid}")

	pid := apiServerPID(t, fleet.Plane("spoke-3").Dir())
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(resume) // a paused API server would not stop at the end of the test
	decisions := []string{"get", "placement", "resilient", "-n", "payments", "-o",
		`jsonpath={range .status.decisions[*]}{.clusterName}={.state} {end}`}
	eventuallyKubectl(t, hubKC, "spoke-1= spoke-2= spoke-3=FailedOver", decisions...)
	available("spoke-1", "4")
	available("spoke-2", "4")

	resume()
	s := newSampler(t, fleet, client.ObjectKey{Namespace: "payments", Name: "payments"}, "spoke-1", "spoke-2", "spoke-3")
	stop := fleettest.Low(t, 100*time.Millisecond, int(2*podReadyDelay/(100*time.Millisecond)), s.fleetAvailable)
	// Back, its copy is scaled down, not deleted: the same object, at 0.
	eventuallyKubectl(t, kc("spoke-3"), uid+" 0", "get", "deployment", "payments", "-n", "payments", "-o", "jsonpath={.metadata.uid} {.spec.replicas}")
	// After failbackAfter (1m) of readiness it takes its share back, the others shrinking.
	fleettest.Eventually(t, 3*time.Minute, "spoke-3 Active again", func() error {
		out, err := kubectl(t, hubKC, decisions...)
		if strings.TrimSpace(out) != "spoke-1= spoke-2= spoke-3=" {
			return fmt.Errorf("decisions %q: %v", out, err)
		}
		return nil
	})
	for spoke, n := range map[string]string{"spoke-3": "4", "spoke-1": "2", "spoke-2": "2"} {
		available(spoke, n)
	}
	if low := stop(); low < 8 {
		t.Errorf("the fleet had %d available replicas at one point after spoke-3 came back (%s), want never fewer than 8", low, s.lowestAt)
	}
	if got := mustKubectl(t, kc("spoke-3"), "get", "deployment", "payments", "-n", "payments", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("spoke-3's copy was replaced (uid %s, was %s): failover deleted it", got, uid)
	}
}

// apiServerPID reads the PID file of a plane's API server, as the example tells users to.
func apiServerPID(t *testing.T, planeDir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(planeDir, "kube-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
