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

func TestClaimDir(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares a directory and returns the one to claim.
		setup func(t *testing.T) string
		// wantErr is empty when the claim must succeed, else a part of the refusal.
		wantErr  string
		wantOut  string   // a part of what claimDir reports
		wantKept []string // entries that must still be there
		wantGone []string // entries that must have been removed
	}{
		{
			name:  "a new directory",
			setup: func(t *testing.T) string { return filepath.Join(t.TempDir(), "a", "new") },
		},
		{
			name:  "an empty directory",
			setup: func(t *testing.T) string { return t.TempDir() },
		},
		{
			name: "an unmarked directory with an unrelated file is refused and keeps it",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				writeFile(t, filepath.Join(dir, "notes.txt"), "mine")
				writeFile(t, filepath.Join(dir, "src", "main.go"), "package main")
				return dir
			},
			wantErr:  "holds files that `flotilla dev up` did not create (notes.txt, src/)",
			wantKept: []string{"notes.txt", "src/main.go"},
			wantGone: []string{markerFile, pidFile},
		},
		{
			name: "a killed run's marked directory is cleared of what it wrote",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				killedRun(t, dir, deadPID(t))
				return dir
			},
			wantOut:  "removed what an earlier `flotilla dev up` left in",
			wantGone: []string{planesDir, hubLogFile, "hub.kubeconfig", "spoke-1.kubeconfig", "spoke-10.kubeconfig"},
		},
		{
			name: "a killed run's marked directory keeps files dev up did not write",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				killedRun(t, dir, deadPID(t))
				writeFile(t, filepath.Join(dir, "notes.txt"), "mine")
				writeFile(t, filepath.Join(dir, "prod.kubeconfig"), "mine")
				return dir
			},
			wantKept: []string{"notes.txt", "prod.kubeconfig"},
			wantGone: []string{planesDir, hubLogFile, "hub.kubeconfig"},
		},
		{
			name: "a running dev up's directory is refused untouched",
			setup: func(t *testing.T) string {
				owner := exec.Command("sleep", "60")
				if err := owner.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
				dir := t.TempDir()
				killedRun(t, dir, owner.Process.Pid)
				return dir
			},
			wantErr:  "in use by another `flotilla dev up`",
			wantKept: []string{planesDir, "hub.kubeconfig", hubLogFile},
		},
		{
			name: "the root of a git repository is refused, marked or not",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				killedRun(t, dir, deadPID(t))
				writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main")
				return dir
			},
			wantErr:  "is the root of a git repository; pass --dir with a new or empty directory",
			wantKept: []string{".git/HEAD", planesDir, "hub.kubeconfig"},
		},
		{
			name: "the home directory is refused, marked or not",
			setup: func(t *testing.T) string {
				home := t.TempDir()
				t.Setenv("HOME", home)
				killedRun(t, home, deadPID(t))
				return home
			},
			wantErr:  "is your home directory; pass --dir with a new or empty directory",
			wantKept: []string{planesDir, "hub.kubeconfig"},
		},
		{
			name:    "the filesystem root is refused",
			setup:   func(*testing.T) string { return "/" },
			wantErr: "is the filesystem root; pass --dir with a new or empty directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t)
			var out bytes.Buffer
			err := claimDir(dir, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("claimDir error = %v, want one containing %q", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("claimDir: %v", err)
				}
				data, err := os.ReadFile(filepath.Join(dir, pidFile))
				if err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
					t.Errorf("pid file = %q, %v; want our pid", data, err)
				}
				if !isMarked(dir) {
					t.Errorf("%s was not written", markerFile)
				}
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output = %q, want it to contain %q", out.String(), tt.wantOut)
			}
			for _, name := range tt.wantKept {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s was not kept: %v", name, err)
				}
			}
			for _, name := range tt.wantGone {
				if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
					t.Errorf("%s is still there", name)
				}
			}
		})
	}
}

// killedRun fills dir with what a dev up with pid left there: the marker, plane data, the
// kubeconfigs of a ten-spoke fleet, the hub log and the pid file.
func killedRun(t *testing.T, dir string, pid int) {
	t.Helper()
	writeFile(t, filepath.Join(dir, markerFile), markerText)
	writeFile(t, filepath.Join(dir, pidFile), strconv.Itoa(pid))
	writeFile(t, filepath.Join(dir, planesDir, "hub", "etcd.log"), "old")
	writeFile(t, filepath.Join(dir, hubLogFile), "old")
	writeFile(t, filepath.Join(dir, "hub.kubeconfig"), "old")
	for i := 1; i <= MaxSpokes; i++ {
		writeFile(t, filepath.Join(dir, kubeconfigName(SpokeName(i))), "old")
	}
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	return dead.Process.Pid
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
