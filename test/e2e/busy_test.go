package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// busyHold is how long the fleet is held with the machine busy: past a Node's default
// heartbeat grace period (50 s) and a heartbeat interval more, which is what once turned every
// fake Node NotReady and left the Pods NotReady for good on a loaded machine.
const busyHold = 90 * time.Second

// TestDevFleetHoldsUpOnABusyMachine runs the dev fleet's examples on three full spokes while
// every core is kept busy for a minute and a half: no Node turns NotReady meanwhile, and at the end
// every example is Available, as the README shows.
func TestDevFleetHoldsUpOnABusyMachine(t *testing.T) {
	_, fleet := startJoinedFleet(t)
	hubKC := fleet.Hub().KubeconfigPath()
	for _, example := range []string{"propagation.yaml", "transparent.yaml"} {
		mustKubectl(t, hubKC, "apply", "-f", "../../examples/"+example)
	}
	eventuallyKubectl(t, hubKC, "6", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")

	burnCPU(t)
	spokes := map[string]kubernetes.Interface{}
	for _, s := range []string{"spoke-1", "spoke-2", "spoke-3"} {
		cs, err := kubernetes.NewForConfig(fleet.Plane(s).RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		spokes[s] = cs
	}
	ctx := context.Background()
	fleettest.Consistently(t, busyHold, "every fake Node stays Ready on a busy machine", func() error {
		for name, cs := range spokes {
			lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			nodes, err := cs.CoreV1().Nodes().List(lctx, metav1.ListOptions{})
			cancel()
			if err != nil {
				continue // a slow answer on a busy machine is not a NotReady Node
			}
			for _, n := range nodes.Items {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
						return fmt.Errorf("%s: node %s Ready=%s (%s)", name, n.Name, c.Status, c.Reason)
					}
				}
			}
		}
		return nil
	})
	eventuallyKubectl(t, hubKC, "6", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	eventuallyKubectl(t, fleet.Plane("spoke-1").KubeconfigPath(), "2", "get", "deployment", "web", "-n", "web-demo", "-o", "jsonpath={.status.availableReplicas}")
	eventuallyKubectl(t, hubKC, "True", "get", "propagation", "web", "-n", "web-demo", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
}

// burnCPU keeps every core busy until the test ends, at the lowest scheduling priority so the
// fleet still gets the CPU it asks for, only later: the machine is busy, not starved. Each
// burner is a process of its own, stopped by PID when the test ends.
func burnCPU(t *testing.T) {
	t.Helper()
	for range runtime.NumCPU() {
		cmd := exec.Command("nice", "-n", "19", "sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a CPU burner: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
