//go:build uitest

package ui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// buildFlotilla compiles the flotilla binary into a temporary directory.
func buildFlotilla(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "flotilla")
	cmd := exec.Command("go", "build", "-o", out, "github.com/flotilla-dev/flotilla/cmd/flotilla")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build flotilla: %v", err)
	}
	return out
}

// startProcess runs a long-lived flotilla command until the test ends; then it stops it, by its
// PID, with SIGTERM (SIGKILL after 15 s). It returns the process's output so far, at any time.
func startProcess(t *testing.T, bin string, args ...string) (output func() string) {
	t.Helper()
	var buf fleettest.SyncBuffer
	proc := exec.Command(bin, args...)
	proc.Stdout, proc.Stderr = &buf, &buf
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(proc.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(proc.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Errorf("%s %s did not stop within 15s of SIGTERM", filepath.Base(bin), args[0])
		}
		if t.Failed() {
			t.Logf("%s %s output:\n%s", filepath.Base(bin), args[0], buf.String())
		}
	})
	return buf.String
}

// dashboardURL waits for a process's output to name the dashboard's URL, and returns its base
// (scheme, host and port) and the URL as printed (the local dashboard's carries its key).
func dashboardURL(t *testing.T, output func() string) (base, printed string) {
	t.Helper()
	re := regexp.MustCompile(`dashboard: (?:serving )?((http://127\.0\.0\.1:[0-9]+)/(?:\?key=[A-Za-z0-9_-]+)?)`)
	fleettest.Eventually(t, time.Minute, "the dashboard serves", func() error {
		m := re.FindStringSubmatch(output())
		if m == nil {
			return fmt.Errorf("no URL yet in:\n%s", output())
		}
		printed, base = m[1], m[2]
		return nil
	})
	return base, printed
}

// run runs a command to its end and fails the test if it fails.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// kubectl runs the kubectl of `make tools` against a plane.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	return run(t, fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// eventuallyKubectl waits until kubectl's output (trimmed) equals want.
func eventuallyKubectl(t *testing.T, kubeconfig, want string, args ...string) {
	t.Helper()
	fleettest.Eventually(t, 90*time.Second, fmt.Sprintf("kubectl %s = %q", strings.Join(args, " "), want), func() error {
		out, err := exec.Command(fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			return fmt.Errorf("got %q (%v)", strings.TrimSpace(string(out)), err)
		}
		return nil
	})
}
