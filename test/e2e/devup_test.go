package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

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
		{"--pull-spokes", "4"}, // more than the 3 spokes
		{"--spokes", "1", "--pull-spokes", "-1"},
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
		t.Fatalf("no PID files under %s", dir)
	}
	return pids
}
