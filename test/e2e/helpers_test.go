package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// kubectl runs the kubectl built by `make tools` with a kubeconfig and returns its combined
// output and error.
func kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fleettest.KubectlPath(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// mustKubectl is kubectl that fails the test on error.
func mustKubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return out
}

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

// binDir is where the Kubernetes binaries are.
func binDir() string { return localfleet.FindBinDir() }
