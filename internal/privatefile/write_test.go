package privatefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file holds the data with mode 0600, replaces what was there, and leaves no
// temporary file behind, even when the write fails.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	st, _ := os.Stat(path)
	if err != nil || string(data) != "new" || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %q (%v), mode %v", data, err, st.Mode().Perm())
	}
	if err := Write(filepath.Join(dir, "missing", "token"), []byte("x")); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
