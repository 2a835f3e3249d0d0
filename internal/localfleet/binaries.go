package localfleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Binary names that a fleet needs in its binary directory.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKwok              = "kwok"
	// kwokStages is not a binary but kwok's node and pod lifecycle stages, written by
	// `make tools` from the kwok module; kwok refuses to run without stages.
	kwokStages = "kwok-stages.yaml"
)

// BinDirEnv names the environment variable that points at the directory holding the
// Kubernetes binaries. The Makefile sets it for tests; without it the directory is found
// next to the running executable or in the bin/ folder of the enclosing Go module.
const BinDirEnv = "FLOTILLA_BIN_DIR"

// FindBinDir returns the directory holding the Kubernetes binaries: $FLOTILLA_BIN_DIR if set,
// else the directory of the running executable if it holds kube-apiserver, else bin/ in the
// nearest parent directory of the working directory that has a go.mod.
func FindBinDir() string {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if fileExists(filepath.Join(dir, binAPIServer)) {
			return dir
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "bin"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "hack", "tools", "go.mod")) {
			return filepath.Join(dir, "bin")
		}
		if filepath.Dir(dir) == dir {
			return filepath.Join(wd, "bin")
		}
	}
}

// checkBinaries reports, in one error, every binary the given planes need that binDir lacks.
func checkBinaries(binDir string, specs []PlaneSpec) error {
	needed := []string{binEtcd, binAPIServer}
	for _, s := range specs {
		if s.Role == RoleHub || s.Mode == ModeFull {
			needed = append(needed, binControllerManager)
		}
		if s.Role == RoleSpoke && s.Mode == ModeFull {
			needed = append(needed, binScheduler, binKwok, kwokStages)
		}
	}
	var missing []string
	seen := map[string]bool{}
	for _, name := range needed {
		if seen[name] {
			continue
		}
		seen[name] = true
		if !fileExists(filepath.Join(binDir, name)) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %v not found in %s; run `make tools` to build them (or set %s)",
			ErrBinariesMissing, missing, binDir, BinDirEnv)
	}
	return nil
}

// ErrBinariesMissing is returned when the Kubernetes binaries have not been built.
var ErrBinariesMissing = errors.New("kubernetes binaries missing")

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
