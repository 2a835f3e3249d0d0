package devenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestClaimDirClearsStaleState(t *testing.T) {
	dir := t.TempDir()
	// A run that was killed: its PID is gone, its files are still there.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, pidFile), strconv.Itoa(dead.Process.Pid))
	writeFile(t, filepath.Join(dir, "planes", "hub", "etcd.log"), "old")
	var out bytes.Buffer
	if err := claimDir(dir, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removing stale state") {
		t.Errorf("clearing stale state was not reported: %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "planes")); !os.IsNotExist(err) {
		t.Error("stale plane data was kept")
	}
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid file = %q, %v; want our pid", data, err)
	}
}

func TestClaimDirRefusesARunningOwner(t *testing.T) {
	dir := t.TempDir()
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	writeFile(t, filepath.Join(dir, pidFile), strconv.Itoa(owner.Process.Pid))
	writeFile(t, filepath.Join(dir, "hub.kubeconfig"), "in use")

	err := claimDir(dir, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "in use by another") || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("error = %v, want a refusal that suggests --dir", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "hub.kubeconfig")); err != nil {
		t.Error("the running owner's files were touched")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
