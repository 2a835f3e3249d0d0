package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// kroModule is the kro module Flotilla compiles and expands RGDs with; its own controller,
// built from the same module, is the baseline of instance_ready.
const kroModule = "github.com/kubernetes-sigs/kro"

// kroRelease is where kro's module sits on this machine and which version go.mod pins.
type kroRelease struct {
	dir, version string
}

// findKro asks the go command for the kro module of Flotilla's go.mod (the benchmark runs from
// the repository, as `make bench` does).
func findKro(ctx context.Context) (kroRelease, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", kroModule).CombinedOutput()
	if err != nil {
		return kroRelease{}, fmt.Errorf("go list -m %s: %v: %s", kroModule, err, strings.TrimSpace(string(out)))
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok || dir == "" {
		return kroRelease{}, fmt.Errorf("go list -m %s: no module directory in %q", kroModule, out)
	}
	return kroRelease{dir: dir, version: version}, nil
}

// build builds kro's controller (cmd/controller) into dir with Flotilla's go.mod, so with the
// Kubernetes libraries Flotilla uses; Go's build cache makes it quick after the first time.
func (k kroRelease) build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "kro-controller")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, kroModule+"/cmd/controller").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s/cmd/controller: %v: %s", kroModule, err, tail(string(out), 5))
	}
	return bin, nil
}

// crds is the directory of kro's chart CRDs: ResourceGraphDefinition and GraphRevision, both
// of which its controller needs.
func (k kroRelease) crds() string { return filepath.Join(k.dir, "helm", "crds") }

// startKro runs kro's controller against one cluster with its chart's defaults (one worker per
// controller, client QPS 100), serving neither metrics nor health probes, which would take
// fixed ports.
func startKro(bin, kubeconfig string) (*process, error) {
	p, err := startProcess(bin, "--kubeconfig", kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		return nil, fmt.Errorf("start kro's controller: %w", err)
	}
	return p, nil
}
