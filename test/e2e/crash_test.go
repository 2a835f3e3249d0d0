package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

const bulkPropagation = `apiVersion: flotilla.dev/v1alpha1
kind: Propagation
metadata: {name: bulk, namespace: bulk}
spec:
  placementRef: {name: all}
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    labelSelector: {matchLabels: {bulk: "yes"}}
`

// TestHubKilledMidDelivery kills `flotilla hub` with SIGKILL while it delivers ConfigMaps to
// two spokes, starts it again, and checks that the fleet converges, that nothing was deleted,
// and that once converged Flotilla writes nothing more.
func TestHubKilledMidDelivery(t *testing.T) {
	const objects = 400
	flotilla := buildFlotilla(t)
	fleet := fleettest.Start(t, standardPlanes()...)
	spokes := []*localfleet.Plane{fleet.Plane("spoke-1"), fleet.Plane("spoke-2")} // spoke-3 stays out
	hubKC := fleet.Hub().KubeconfigPath()
	runFlotilla(t, flotilla, hubKC, "install", "--crds-only")
	first := startHubProcess(t, flotilla, hubKC)
	for _, s := range spokes {
		runFlotilla(t, flotilla, hubKC, "join", s.Name(), "--kubeconfig", s.KubeconfigPath())
	}

	applyBulk(t, hubKC, objects)

	// Kill the controller as soon as the first objects arrive.
	spoke1 := fleet.Plane("spoke-1").KubeconfigPath()
	fleettest.Eventually(t, 60*time.Second, "first objects delivered", func() error {
		if n := countConfigMaps(t, spoke1); n == 0 {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	first.kill(t)
	t.Logf("killed flotilla hub with %d of %d objects on spoke-1", countConfigMaps(t, spoke1), objects)

	startHubProcess(t, flotilla, hubKC)
	for _, s := range spokes {
		kc := s.KubeconfigPath()
		fleettest.Eventually(t, 90*time.Second, "all objects on "+s.Name(), func() error {
			if n := countConfigMaps(t, kc); n != objects {
				return fmt.Errorf("%d of %d", n, objects)
			}
			return nil
		})
	}
	eventuallyKubectl(t, hubKC, "Applied 2", "get", "propagation", "bulk", "-n", "bulk", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)

	writes := map[string]int{}
	for _, s := range spokes {
		events, err := s.AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if !ev.Mutating() || !strings.HasPrefix(ev.UserAgent, "flotilla") {
				continue
			}
			if ev.Verb == "delete" {
				t.Errorf("Flotilla deleted %s %s/%s on %s", ev.ObjectRef.Resource, ev.ObjectRef.Namespace, ev.ObjectRef.Name, s.Name())
			}
			writes[s.Name()]++
		}
	}
	t.Logf("writes to the spokes across the crash: %v (%d objects each)", writes, objects)

	// Converged: a quiet window brings no more writes.
	before := fmt.Sprint(writes)
	fleettest.Consistently(t, 3*time.Second, "no writes after convergence", func() error {
		after := map[string]int{}
		for _, s := range spokes {
			events, _ := s.AuditEvents()
			for _, ev := range events {
				if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") {
					after[s.Name()]++
				}
			}
		}
		if fmt.Sprint(after) != before {
			return fmt.Errorf("writes %v, before %s", after, before)
		}
		return nil
	})
}

// applyBulk applies, with kubectl, the namespace bulk with a Placement of every cluster, n
// ConfigMaps labelled bulk=yes and the Propagation bulk that delivers them.
func applyBulk(t *testing.T, hubKubeconfig string, n int) {
	t.Helper()
	var manifest bytes.Buffer
	manifest.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: bulk}\n---\n" +
		"apiVersion: flotilla.dev/v1alpha1\nkind: Placement\nmetadata: {name: all, namespace: bulk}\nspec: {clusterSelector: {}}\n")
	for i := range n {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: bulk, labels: {bulk: \"yes\"}}\ndata: {v: \"%d\"}\n", i, i)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bulk.yaml"), manifest.String())
	writeFile(t, filepath.Join(dir, "propagation.yaml"), bulkPropagation)
	mustKubectl(t, hubKubeconfig, "apply", "--server-side", "-f", filepath.Join(dir, "bulk.yaml"))
	mustKubectl(t, hubKubeconfig, "apply", "-f", filepath.Join(dir, "propagation.yaml"))
}

func countConfigMaps(t *testing.T, kubeconfig string) int {
	t.Helper()
	out, err := kubectl(t, kubeconfig, "get", "configmaps", "-n", "bulk", "-l", "bulk=yes", "--no-headers", "-o", "name")
	if err != nil {
		return 0
	}
	return strings.Count(out, "configmap/")
}

// hubProcess is a `flotilla hub` the test may kill.
type hubProcess struct {
	cmd    *exec.Cmd
	exited chan error
}

// startHubProcess runs `flotilla hub` until killed or the test ends; extra flags follow the
// test's defaults (and win over them).
func startHubProcess(t *testing.T, flotilla, hubKubeconfig string, extra ...string) *hubProcess {
	t.Helper()
	var log fleettest.SyncBuffer
	cmd := exec.Command(flotilla, append([]string{"hub", "--hub-kubeconfig", hubKubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--probe-interval=1s"}, extra...)...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &hubProcess{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil && localfleet.ProcessAlive(cmd.Process.Pid) {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
			}
		}
		if t.Failed() {
			t.Logf("flotilla hub (pid %s) log:\n%s", strconv.Itoa(cmd.Process.Pid), log.String())
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to end.
func (p *hubProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}
