package install_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// TestGeneratedManifestsAreCurrent regenerates the CRDs and the hub's RBAC from the markers in
// api/ and internal/ and compares them with what is committed (and embedded by `flotilla
// install`): a marker changed without `make generate` fails here, not in a user's cluster.
func TestGeneratedManifestsAreCurrent(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	controllerGen := filepath.Join(localfleet.FindBinDir(), "controller-gen")
	if _, err := os.Stat(controllerGen); err != nil {
		t.Fatalf("controller-gen not found at %s: run `make tools`", controllerGen)
	}
	out := t.TempDir()
	for _, args := range [][]string{
		{"crd", "paths=./api/...", "output:crd:artifacts:config=" + filepath.Join(out, "crd")},
		{"rbac:roleName=flotilla-hub", "paths=./internal/...", "output:rbac:artifacts:config=" + filepath.Join(out, "rbac")},
	} {
		cmd := exec.Command(controllerGen, args...)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, msg)
		}
	}
	compare := func(generated, committed string) {
		t.Helper()
		want, err := os.ReadFile(generated)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(committed)
		if err != nil {
			t.Fatalf("%s is generated but not committed: run `make generate`", committed)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is out of date: run `make generate`", committed)
		}
	}
	crds, _ := filepath.Glob(filepath.Join(out, "crd", "*.yaml"))
	if len(crds) == 0 {
		t.Fatal("controller-gen generated no CRDs")
	}
	for _, f := range crds {
		compare(f, filepath.Join(root, "config", "crd", "bases", filepath.Base(f)))
	}
	compare(filepath.Join(out, "rbac", "role.yaml"), filepath.Join(root, "config", "rbac", "role.yaml"))
}
