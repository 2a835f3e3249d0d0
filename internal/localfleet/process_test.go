package localfleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ports are distinct within a call and across calls: the planes of a fleet start at once, each
// with its own call, and a port one of them has not bound yet must not go to another.
func TestFreePortsAreDistinct(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		ports, err := freePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p < lowestPort || p >= ephemeralStart() || seen[p] {
				t.Fatalf("port %d outside [%d, %d) or handed out twice", p, lowestPort, ephemeralStart())
			}
			seen[p] = true
		}
	}
}

func TestProcessStopEndsProcessAndReportsExit(t *testing.T) {
	dir := t.TempDir()
	// A process that ignores SIGTERM must still be gone after stop.
	p, err := startProcess(dir, "stubborn", "/bin/sh", []string{"-c", "trap '' TERM; echo started; while :; do sleep 0.05; done"})
	if err != nil {
		t.Fatal(err)
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "stubborn.pid"))
	if err != nil || strings.TrimSpace(string(pidFile)) == "" {
		t.Fatalf("pid file not written: %v", err)
	}
	if !ProcessAlive(p.PID()) {
		t.Fatal("process not alive after start")
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(tailFile(p.logPath, 1), "started") {
		if time.Now().After(deadline) {
			t.Fatal("process never logged that it started")
		}
		<-tick.C
	}
	start := time.Now()
	p.stop(200 * time.Millisecond)
	if ProcessAlive(p.PID()) {
		t.Fatal("process still alive after stop")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("stop took %s", took)
	}
	err = p.exitError()
	if !strings.Contains(err.Error(), "stubborn exited") || !strings.Contains(err.Error(), "started") {
		t.Fatalf("exit error %q lacks the name or the log tail", err)
	}
}

func TestTailFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var lines []string
	for i := range 30 {
		lines = append(lines, strings.Repeat("x", i))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(tailFile(path, 3), "\n")
	if len(got) != 3 || strings.TrimSpace(got[2]) != lines[29] {
		t.Fatalf("tail = %q", got)
	}
	if !strings.Contains(tailFile(filepath.Join(t.TempDir(), "missing"), 3), "no log") {
		t.Fatal("missing file not reported")
	}
}
