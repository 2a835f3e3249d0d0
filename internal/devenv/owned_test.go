package devenv

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCleanDirRemovesOnlyWhatTheRunWrote(t *testing.T) {
	planes := []string{"hub", "spoke-1"}
	tests := []struct {
		name     string
		runWrote []string // what the run got to write after claiming the directory
		userAdds []string // what a user put in the directory during the run
	}{
		{
			name:     "a run that wrote everything",
			runWrote: []string{"planes/hub/etcd.log", "planes/spoke-1/etcd.log", "hub.kubeconfig", "spoke-1.kubeconfig", hubLogFile},
		},
		{
			name:     "a run that failed before starting the planes",
			runWrote: nil,
		},
		{
			name:     "files a user added during the run stay",
			runWrote: []string{"planes/hub/etcd.log", "hub.kubeconfig", "spoke-1.kubeconfig", hubLogFile},
			// spoke-7.kubeconfig has a name dev up uses, but this run of two planes did not write it.
			userAdds: []string{"notes.txt", "prod.kubeconfig", "spoke-7.kubeconfig", "manifests/app.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dev")
			if err := claimDir(dir, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			for _, name := range tt.runWrote {
				writeFile(t, filepath.Join(dir, name), "run")
			}
			for _, name := range tt.userAdds {
				writeFile(t, filepath.Join(dir, name), "mine")
			}

			if err := cleanDir(dir, ownedEntries(planes)); err != nil {
				t.Fatal(err)
			}

			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("the directory itself was removed: %v", err)
			}
			for _, name := range tt.userAdds {
				if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != "mine" {
					t.Errorf("%s = %q, %v; want the user's file kept", name, data, err)
				}
			}
			var left []string
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				left = append(left, e.Name())
			}
			// The marker stays exactly when the user's files do, so that the next run starts here.
			if want := len(tt.userAdds) > 0; slices.Contains(left, markerFile) != want {
				t.Errorf("marker left = %v, want %v (entries %v)", !want, want, left)
			}
			if len(tt.userAdds) > 0 {
				if err := claimDir(dir, &bytes.Buffer{}); err != nil {
					t.Errorf("the next run does not start in a directory holding the user's files: %v", err)
				}
			}
			for _, name := range ownedEntries(planes) {
				if name == markerFile {
					continue
				}
				if slices.Contains(left, name) {
					t.Errorf("%s, which the run wrote, is still there", name)
				}
			}
		})
	}
}

func TestOwnedEntries(t *testing.T) {
	got := ownedEntries([]string{"hub", "spoke-1", "spoke-2"})
	want := []string{planesDir, hubLogFile, "hub.kubeconfig", "spoke-1.kubeconfig", "spoke-2.kubeconfig", pidFile, markerFile}
	if !slices.Equal(got, want) {
		t.Errorf("ownedEntries = %v, want %v", got, want)
	}
	// What a killed run of any size left: every plane Layout can name, up to MaxSpokes.
	stale := anyRunEntries()
	for _, name := range []string{"hub.kubeconfig", "spoke-1.kubeconfig", kubeconfigName(SpokeName(MaxSpokes))} {
		if !slices.Contains(stale, name) {
			t.Errorf("anyRunEntries lacks %s: %v", name, stale)
		}
	}
	if slices.Contains(stale, kubeconfigName(SpokeName(MaxSpokes+1))) {
		t.Errorf("anyRunEntries names a spoke beyond MaxSpokes: %v", stale)
	}
}
