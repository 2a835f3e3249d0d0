package devenv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// useAnotherDir ends every refusal of a directory: what the user can do instead.
const useAnotherDir = "pass --dir with a new or empty directory"

// shownEntries is how many entries of a refused directory its error names.
const shownEntries = 5

// claimDir makes dir ours, or refuses it. It takes only a directory that does not exist or is
// empty, or one an earlier `flotilla dev up` set up (it holds markerFile). A marked directory
// that a running dev up holds is refused; from one that none holds, claimDir removes what the
// earlier run wrote (its processes died with it, see anyRunEntries) and keeps everything else.
// Any other directory is refused untouched, and so are the filesystem root, the user's home
// directory and the root of a git repository, marked or not. Then it writes the marker and our
// PID.
func claimDir(dir string, out io.Writer) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := refuseSpecialDir(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && len(entries) == 0:
		// A new or empty directory: ours.
	case err != nil:
		return fmt.Errorf("read %s: %w", dir, err)
	case !isMarked(dir):
		return fmt.Errorf("%s holds files that `flotilla dev up` did not create (%s) and no %s marker; %s",
			dir, listEntries(entries), markerFile, useAnotherDir)
	default:
		if err := refuseLiveOwner(dir); err != nil {
			return err
		}
		removed, err := removeEntries(dir, anyRunEntries())
		if len(removed) > 0 {
			_, _ = fmt.Fprintf(out, "removed what an earlier `flotilla dev up` left in %s: %s\n", dir, strings.Join(removed, ", "))
		}
		if err != nil {
			return fmt.Errorf("clear what an earlier run left in %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, markerFile), []byte(markerText), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// refuseSpecialDir refuses the directories whose contents dev up never manages, whatever they
// hold: the filesystem root, the user's home directory and the root of a git repository.
func refuseSpecialDir(dir string) error {
	resolved := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		resolved = r
	}
	if filepath.Dir(resolved) == resolved {
		return fmt.Errorf("%s is the filesystem root; %s", dir, useAnotherDir)
	}
	if home, err := os.UserHomeDir(); err == nil && sameDir(dir, home) {
		return fmt.Errorf("%s is your home directory; %s", dir, useAnotherDir)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return fmt.Errorf("%s is the root of a git repository; %s", dir, useAnotherDir)
	}
	return nil
}

// refuseLiveOwner refuses a directory whose pid file names a running process other than us.
func refuseLiveOwner(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return nil
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid > 0 && pid != os.Getpid() && localfleet.ProcessAlive(pid) {
		return fmt.Errorf("%s is in use by another `flotilla dev up` (pid %d); stop it with Ctrl-C, or pass --dir to use another directory", dir, pid)
	}
	return nil
}

// isMarked reports whether an earlier dev up set dir up: markerFile is a regular file in it.
func isMarked(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, markerFile))
	return err == nil && fi.Mode().IsRegular()
}

func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// listEntries names the first shownEntries entries, directories with a trailing slash.
func listEntries(entries []os.DirEntry) string {
	names := make([]string, 0, shownEntries+1)
	for i, e := range entries {
		if i == shownEntries {
			names = append(names, fmt.Sprintf("and %d more", len(entries)-shownEntries))
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}
