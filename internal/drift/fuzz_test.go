package drift

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzCompare checks the properties drift detection relies on, for any pair of JSON objects:
// an object never drifts from itself, Compare never panics, and its report is bounded and made
// of well-formed pointers that KeepLive can take values from; what a server stored never
// drifts from its projection on what Flotilla sent.
func FuzzCompare(f *testing.F) {
	f.Add(`{"spec":{"replicas":3}}`, `{"spec":{"replicas":"3"}}`, "/spec/replicas")
	f.Add(`{"a":[{"name":"x","v":1}]}`, `{"a":[{"name":"y"},{"name":"x","v":1.0}]}`, "/a/0/v")
	f.Add(`{"q":"1Gi","e":{},"l":[]}`, `{"q":"1073741824"}`, "/q")
	f.Add(`{"a":[1,2]}`, `{"a":[1]}`, "/a~1b/~0")
	f.Fuzz(func(t *testing.T, desiredJSON, liveJSON, pointer string) {
		var desired, live map[string]any
		if json.Unmarshal([]byte(desiredJSON), &desired) != nil || json.Unmarshal([]byte(liveJSON), &live) != nil {
			return
		}
		if got := Compare(desired, runtime.DeepCopyJSON(desired), nil); got != nil {
			t.Fatalf("an object drifts from itself: %v", got)
		}
		if got := Compare(Project(desired, live), live, nil); got != nil {
			t.Fatalf("a stored object drifts from its projection: %v", got)
		}
		paths := Compare(desired, live, nil)
		if len(paths) > maxPaths {
			t.Fatalf("%d paths reported", len(paths))
		}
		for _, p := range paths {
			if _, err := ParsePointer(p); err != nil && p != "" {
				t.Fatalf("reported a malformed pointer %q: %v", p, err)
			}
		}
		ignore, err := ParsePointers([]string{pointer})
		if err != nil {
			return
		}
		kept := KeepLive(desired, live, ignore)
		for _, p := range Compare(kept, live, nil) {
			if hasPrefix(mustParse(t, p), ignore[0]) {
				t.Fatalf("a kept field still differs: %s", p)
			}
		}
	})
}

func mustParse(t *testing.T, p string) []string {
	if p == "" {
		return nil
	}
	s, err := ParsePointer(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
