package devenv

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

const pidFile = "dev.pid"

// claimDir makes dir ours: it refuses a directory that a running `flotilla dev up` holds, and
// clears what a killed run left behind (its processes died with it) before recording our PID.
func claimDir(dir string, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, pidFile)); err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if pid > 0 && pid != os.Getpid() && localfleet.ProcessAlive(pid) {
			return fmt.Errorf("%s is in use by another `flotilla dev up` (pid %d); stop it with Ctrl-C, or pass --dir to use another directory", dir, pid)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		_, _ = fmt.Fprintf(out, "removing stale state in %s left by an earlier run\n", dir)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("clear stale state in %s: %w", dir, err)
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}
