package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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

// TestDevUp runs `flotilla dev up` as a user would: it waits for the "ready:" line, uses the
// kubeconfigs it wrote, checks that a second run on the same directory is refused, then sends
// SIGINT and checks that every process it started is gone within 10 seconds.
func TestDevUp(t *testing.T) {
	flotilla := buildFlotilla(t)
	dir := filepath.Join(t.TempDir(), "dev")

	cmd := exec.Command(flotilla, "dev", "up", "--spokes", "2", "--nodes", "1", "--dir", dir, "--bin-dir", binDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var output bytes.Buffer
	ready := make(chan struct{})
	go func() {
		scanner := bufio.NewScanner(stdout)
		signalled := false
		for scanner.Scan() {
			line := scanner.Text()
			output.WriteString(line + "\n")
			if strings.HasPrefix(line, "ready:") && !signalled {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		// On an early failure, stop dev up (its children get SIGKILL when it dies).
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})

	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("flotilla dev up exited before it was ready: %v\nstderr:\n%s", err, stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("flotilla dev up not ready after 3 minutes\nstderr:\n%s", stderr.String())
	}

	for _, plane := range []string{"hub", "spoke-1", "spoke-2"} {
		kc := filepath.Join(dir, plane+".kubeconfig")
		mustKubectl(t, kc, "get", "namespaces", "default")
	}
	nodes := mustKubectl(t, filepath.Join(dir, "spoke-2.kubeconfig"), "get", "nodes", "-l", "region=us-east,env=staging", "-o", "name")
	if strings.TrimSpace(nodes) != "node/spoke-2-node-0" {
		t.Fatalf("spoke-2 nodes labelled region=us-east,env=staging: %q", nodes)
	}

	// The spokes are registered and Ready, with their version and capacity: spoke-1 joined,
	// spoke-2 imported from a kubeconfig Secret, as dev up says.
	clusters := mustKubectl(t, filepath.Join(dir, "hub.kubeconfig"), "get", "clusters", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.kubernetesVersion} {.status.nodeCount} {.metadata.labels.region} {.metadata.labels.flotilla\.dev/source}{"\n"}{end}`)
	if want := "spoke-1 True " + localfleet.KubernetesVersion + " 1 eu-west \nspoke-2 True " + localfleet.KubernetesVersion + " 1 us-east kubeconfig-secret\n"; clusters != want {
		t.Fatalf("clusters on the hub:\n%s\nwant:\n%s", clusters, want)
	}
	for _, line := range []string{"spoke-1 registered with `flotilla join --api-groups kro.run,example.com`", "spoke-2 registered through the kubeconfig Secret flotilla-system/spoke-2"} {
		if !strings.Contains(output.String(), line) {
			t.Errorf("dev up does not say %q:\n%s", line, output.String())
		}
	}

	// The examples dev up suggests work on the dev fleet, exactly as printed.
	for _, line := range strings.Split(output.String(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "kubectl ") || !strings.Contains(line, "examples/") && !strings.Contains(line, " wait ") {
			continue
		}
		args := strings.Fields(line)[1:]
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") {
				args[i] = "../../" + a
			}
		}
		cmd := exec.Command(fleettest.KubectlPath(t), args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("suggested command %q failed: %v\n%s", line, err, out)
		}
	}
	spoke1 := filepath.Join(dir, "spoke-1.kubeconfig")
	eventuallyKubectl(t, spoke1, "2", "get", "deployment", "web", "-n", "web-demo", "-o", "jsonpath={.status.availableReplicas}")
	eventuallyKubectl(t, filepath.Join(dir, "spoke-2.kubeconfig"), "0 2 * * *", "get", "backup", "nightly", "-n", "ops", "-o", "jsonpath={.spec.schedule}")
	eventuallyKubectl(t, filepath.Join(dir, "hub.kubeconfig"), "6", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	eventuallyKubectl(t, filepath.Join(dir, "hub.kubeconfig"), "True", "get", "propagation", "web", "-n", "web-demo", "-o",
		`jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	// Overrides per cluster, and an edit made on a spoke put back.
	banner := []string{"get", "configmap", "banner", "-n", "tuned-demo", "-o", "jsonpath={.data.text}"}
	eventuallyKubectl(t, spoke1, "hello from spoke-1 in eu-west", banner...)
	eventuallyKubectl(t, spoke1, "eu.registry.example.com/api:1.0", "get", "deployment", "api", "-n", "tuned-demo", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
	mustKubectl(t, spoke1, "patch", "configmap", "banner", "-n", "tuned-demo", "--type", "merge", "-p", `{"data":{"text":"edited"}}`)
	eventuallyKubectl(t, spoke1, "hello from spoke-1 in eu-west", banner...)
	eventuallyKubectl(t, filepath.Join(dir, "hub.kubeconfig"), "DriftCorrected", "get", "events", "-n", "tuned-demo",
		"--field-selector", "reason=DriftCorrected", "-o", "jsonpath={.items[0].reason}")

	second := exec.Command(flotilla, "dev", "up", "--dir", dir, "--bin-dir", binDir())
	secondOut, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(secondOut), "in use by another `flotilla dev up`") {
		t.Fatalf("a second dev up on the same directory was not refused clearly: %v\n%s", err, secondOut)
	}

	pids := planePIDs(t, dir)
	if len(pids) != 3+2*5 { // hub: etcd, apiserver, kcm; spokes: etcd, apiserver, kcm, scheduler, kwok
		t.Fatalf("found %d component PIDs, want 13: %v", len(pids), pids)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("dev up exited with %v after SIGINT\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dev up still running 10 seconds after SIGINT")
	}
	for name, pid := range pids {
		if localfleet.ProcessAlive(pid) {
			t.Errorf("%s (pid %d) still running after dev up stopped", name, pid)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dev up left %d entries in %s", len(entries), dir)
	}
	if !strings.Contains(output.String(), "stopped.") {
		t.Errorf("dev up did not report that it stopped:\n%s", output.String())
	}
}

// TestDevUpUsageErrors checks that absurd flag values are usage errors (exit status 2) that
// say what is allowed, and that nothing is started.
func TestDevUpUsageErrors(t *testing.T) {
	flotilla := buildFlotilla(t)
	for _, args := range [][]string{
		{"--spokes", "0"},
		{"--spokes", "-3"},
		{"--spokes", "5000"},
		{"--nodes", "0"},
		{"--spokes", "three"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dev")
			cmd := exec.Command(flotilla, append([]string{"dev", "up", "--dir", dir}, args...)...)
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
				t.Fatalf("exit = %v, want status 2\n%s", err, out)
			}
			if !strings.Contains(string(out), "--") || !strings.Contains(string(out), "flotilla --help") {
				t.Fatalf("usage error does not name the flag or point to --help:\n%s", out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("a usage error created %s", dir)
			}
		})
	}
}

// TestDevUpWithoutBinaries checks that a missing binary directory is reported with the command
// that builds it.
func TestDevUpWithoutBinaries(t *testing.T) {
	flotilla := buildFlotilla(t)
	cmd := exec.Command(flotilla, "dev", "up", "--dir", filepath.Join(t.TempDir(), "dev"), "--bin-dir", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "make tools") {
		t.Fatalf("missing binaries not reported with `make tools`: %v\n%s", err, out)
	}
}

// planePIDs reads the PID files of every plane component under a dev directory.
func planePIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "planes", "*", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		pids[rel] = pid
	}
	if len(pids) == 0 {
		t.Fatal(fmt.Sprintf("no PID files under %s", dir))
	}
	return pids
}
