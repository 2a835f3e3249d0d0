package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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

// built is the flotilla binary buildFlotilla made, once for every test of this package (a
// link costs ten seconds of CPU); TestMain removes its directory.
var built struct {
	sync.Mutex
	dir, path string
}

// buildFlotilla compiles the flotilla binary into a temporary directory the first time it is
// asked for, and returns that binary every time: tests run it, and copy it where they need
// it elsewhere.
func buildFlotilla(t *testing.T) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		return built.path
	}
	dir, err := os.MkdirTemp("", "flotilla-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-o", out, "github.com/flotilla-dev/flotilla/cmd/flotilla")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("build flotilla: %v", err)
	}
	built.dir, built.path = dir, out
	return out
}

// removeBuilt removes what buildFlotilla built.
func removeBuilt() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	built.dir, built.path = "", ""
}

// binDir is where the Kubernetes binaries are.
func binDir() string { return localfleet.FindBinDir() }
