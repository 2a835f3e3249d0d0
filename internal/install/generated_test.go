package install_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/install"
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
		{"crd", "paths=github.com/kubernetes-sigs/kro/api/v1alpha1", "output:crd:artifacts:config=" + filepath.Join(out, "kro")},
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
	compare(filepath.Join(out, "kro", "kro.run_resourcegraphdefinitions.yaml"), filepath.Join(root, "config", "crd", "kro", "kro.run_resourcegraphdefinitions.yaml"))
}

// TestKroCRDIsKros checks that the ResourceGraphDefinition CRD Flotilla installs is exactly the
// one the pinned kro release ships in its chart: users get kro's API, not a look-alike.
func TestKroCRDIsKros(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/kubernetes-sigs/kro").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/kubernetes-sigs/kro: %v", err)
	}
	kros, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "helm", "crds", "kro.run_resourcegraphdefinitions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "kro", "kro.run_resourcegraphdefinitions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kros, ours) {
		t.Error("config/crd/kro differs from kro's chart CRD: run `make generate`, and check that controller-gen is the version kro generates with")
	}
	crd, err := install.KroCRD()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != "resourcegraphdefinitions.kro.run" {
		t.Errorf("embedded kro CRD is %s", crd.Name)
	}
}
