package fleettest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// startTimeout bounds how long a test waits for its fleet.
const startTimeout = 3 * time.Minute

// Start starts the planes and registers their shutdown with t.Cleanup. The fleet's directory is
// a fresh temporary directory; when the test fails, the path of every plane's logs is reported.
// In a test binary run through Main, a passing test's fleet is paused and kept instead, and
// reset for the next test that asks for the same planes (pool.go).
func Start(t testing.TB, planes ...localfleet.PlaneSpec) *localfleet.Fleet {
	t.Helper()
	key := poolKey(planes)
	f := takeIdle(t, key)
	if f == nil {
		f = start(t, key, planes)
	}
	t.Cleanup(func() {
		switch {
		case t.Failed():
			f.fleet.Stop()
			t.Logf("fleet logs kept in %s", f.dir)
		case pooling():
			release(t, f)
		default:
			f.stop()
		}
	})
	return f.fleet
}

func start(t testing.TB, key string, planes []localfleet.PlaneSpec) *idleFleet {
	t.Helper()
	dir, err := os.MkdirTemp("", "flotilla-fleet-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	fleet, err := localfleet.Start(ctx, localfleet.Options{Dir: dir, Planes: planes, Progress: testWriter{t}})
	if err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("start local fleet: %v", err)
	}
	f := &idleFleet{key: key, fleet: fleet, dir: dir}
	if pooling() {
		if err := fleet.MarkClean(ctx); err != nil {
			f.stop()
			t.Fatalf("mark the fleet clean: %v", err)
		}
	}
	return f
}

// Hub is the spec of a hub plane.
func Hub() localfleet.PlaneSpec {
	return localfleet.PlaneSpec{Name: "hub", Role: localfleet.RoleHub}
}

// APIOnlySpoke is the spec of a spoke that runs etcd and kube-apiserver only.
func APIOnlySpoke(name string) localfleet.PlaneSpec {
	return localfleet.PlaneSpec{Name: name, Role: localfleet.RoleSpoke, Mode: localfleet.ModeAPIOnly}
}

// FullSpoke is the spec of a spoke with controllers, a scheduler and fake Nodes.
func FullSpoke(name string, labels map[string]string) localfleet.PlaneSpec {
	return localfleet.PlaneSpec{Name: name, Role: localfleet.RoleSpoke, Mode: localfleet.ModeFull, Labels: labels}
}

// KubectlPath returns the kubectl built by `make tools`, which tests use as their client so they
// do not depend on whatever kubectl the machine has.
func KubectlPath(t testing.TB) string {
	t.Helper()
	path := filepath.Join(localfleet.FindBinDir(), "kubectl")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("kubectl not found at %s: run `make tools` first", path)
	}
	return path
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}
