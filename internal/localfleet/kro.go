package localfleet

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KroModule is the kro module Flotilla compiles and expands RGDs with. Its own controller,
// built from the same module, runs against a plane where a benchmark or a test needs the real
// kro beside Flotilla: the baseline of instance_ready, a cluster taken over from its own kro.
const KroModule = "github.com/kubernetes-sigs/kro"

// KroRelease is the kro module of Flotilla's go.mod: where it sits on this machine and which
// version go.mod pins.
type KroRelease struct {
	Dir, Version string
}

// FindKro asks the go command for the kro module of the Go module the caller runs in (the
// benchmark and the tests run from Flotilla's repository).
func FindKro(ctx context.Context) (KroRelease, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", KroModule).CombinedOutput()
	if err != nil {
		return KroRelease{}, fmt.Errorf("go list -m %s: %v: %s", KroModule, err, strings.TrimSpace(string(out)))
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok || dir == "" {
		return KroRelease{}, fmt.Errorf("go list -m %s: no module directory in %q", KroModule, out)
	}
	return KroRelease{Dir: dir, Version: version}, nil
}

// BuildController builds kro's controller (cmd/controller) into dir with Flotilla's go.mod, so
// with the Kubernetes libraries Flotilla uses; Go's build cache makes it quick after the first
// time. It returns the binary's path.
func (k KroRelease) BuildController(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "kro-controller")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, KroModule+"/cmd/controller").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s/cmd/controller: %v: %s", KroModule, err, lastLines(string(out), 5))
	}
	return bin, nil
}

// CRDDir is the directory of kro's chart CRDs: ResourceGraphDefinition and GraphRevision, both
// of which its controller needs installed before it starts.
func (k KroRelease) CRDDir() string { return filepath.Join(k.Dir, "helm", "crds") }

// KroController is kro's controller running against one cluster. It logs to
// <dir>/kro-controller.log and dies with the process that started it.
type KroController struct {
	proc *process
}

// StartKroController runs the controller bin against the cluster of kubeconfig with its
// chart's defaults (one worker per controller, client QPS 100), serving neither metrics nor
// health probes, which would take fixed ports. Stop it with Stop.
func StartKroController(dir, bin, kubeconfig string) (*KroController, error) {
	p, err := startProcess(dir, "kro-controller", bin,
		[]string{"--kubeconfig", kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0"})
	if err != nil {
		return nil, fmt.Errorf("start kro's controller: %w", err)
	}
	return &KroController{proc: p}, nil
}

// kroStopGrace is how long kro's controller has to end after SIGTERM before it is killed.
const kroStopGrace = 15 * time.Second

// PID is the controller's process ID.
func (k *KroController) PID() int { return k.proc.PID() }

// Stop ends the controller by its PID (SIGTERM, then SIGKILL after a grace period) and returns
// once it has exited; stopping it again does nothing.
func (k *KroController) Stop() { k.proc.stop(kroStopGrace) }

// LogTail returns the last n lines of the controller's log, indented, for an error message.
func (k *KroController) LogTail(n int) string { return tailFile(k.proc.logPath, n) }

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
