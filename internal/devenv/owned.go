package devenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// The entries Up writes in its directory, besides the kubeconfigs (kubeconfigName) and the hub
// controller's log (hubLogFile).
const (
	// markerFile marks a directory that `flotilla dev up` set up. Only a marked directory may
	// hold anything when dev up starts; see claimDir.
	markerFile = ".flotilla-dev"
	// pidFile holds the PID of the dev up that uses the directory.
	pidFile = "dev.pid"
	// planesDir holds every plane's data, certificates, logs and PID files (localfleet's).
	planesDir = "planes"
)

const markerText = `This directory is used by 'flotilla dev up'. While no dev up runs here, the next
one removes what an earlier run wrote (planes/, hub.kubeconfig, spoke-N.kubeconfig,
` + hubLogFile + `, ` + pidFile + `, this file) and keeps everything else. Delete this file to keep
dev up out of the directory.
`

// kubeconfigName is the name of the named plane's kubeconfig in Up's directory.
func kubeconfigName(plane string) string { return plane + ".kubeconfig" }

// ownedEntries lists every entry Up writes in its directory for a fleet of the named planes.
// It is the only list of what dev up may remove there: claimDir and cleanDir remove these
// names and nothing else.
func ownedEntries(planes []string) []string {
	names := []string{planesDir, hubLogFile}
	for _, p := range planes {
		names = append(names, kubeconfigName(p))
	}
	return append(names, pidFile, markerFile)
}

// anyRunEntries is ownedEntries for the largest fleet Up starts, so it covers what a run of any
// size may have left behind.
func anyRunEntries() []string {
	specs, _ := Layout(MaxSpokes, MaxNodes) // the largest valid size: Layout cannot fail
	return ownedEntries(planeNames(specs))
}

func planeNames(specs []localfleet.PlaneSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// removeEntries removes the named entries of dir, except the marker, and returns the names of
// those that were there. A missing entry is not an error.
func removeEntries(dir string, names []string) (removed []string, err error) {
	var errs []error
	for _, name := range names {
		if name == markerFile {
			continue
		}
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// cleanDir removes the entries Up wrote in dir (names, from ownedEntries) and nothing else:
// files a user put in dir stay, and so does dir. The marker goes last, and only when dir is then
// empty: a directory that could not be cleaned, or that holds a user's files, keeps it, so that
// the next run recognises the directory as one dev up set up and starts there.
func cleanDir(dir string, names []string) error {
	if _, err := removeEntries(dir, names); err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	if len(entries) != 1 || entries[0].Name() != markerFile {
		return nil // a user's files stay, and so does the marker that lets the next run start here
	}
	if err := os.Remove(filepath.Join(dir, markerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	return nil
}
