package drift

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// ParsePointers parses a list of JSON pointers, failing on the first malformed one.
func ParsePointers(pointers []string) ([][]string, error) {
	out := make([][]string, 0, len(pointers))
	for _, p := range pointers {
		path, err := ParsePointer(p)
		if err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

// KeepLive returns desired with the value of every ignored field taken from live: an update
// then neither changes nor drops a field Flotilla has handed over to someone on the spoke (an
// HPA's replica count, say). Ignored fields live does not have are left out. desired is not
// modified; without ignored fields it is returned as is.
func KeepLive(desired, live map[string]any, ignore [][]string) map[string]any {
	if len(ignore) == 0 {
		return desired
	}
	out := runtime.DeepCopyJSON(desired)
	for _, path := range ignore {
		v, ok := Get(live, path)
		if !ok {
			Remove(out, path)
			continue
		}
		// A path through a list index that desired does not have cannot be kept; the
		// field is then applied as desired.
		_ = Set(out, path, runtime.DeepCopyJSONValue(v))
	}
	return out
}

// IgnoreSet holds parsed ignoreFields, by kind.
type IgnoreSet []ignoreEntry

type ignoreEntry struct {
	apiVersion, kind string
	paths            [][]string
}

// NewIgnoreSet parses ignoreFields; a malformed pointer is an error naming it.
func NewIgnoreSet(specs []flotillav1.IgnoreFields) (IgnoreSet, error) {
	out := make(IgnoreSet, 0, len(specs))
	for _, s := range specs {
		paths, err := ParsePointers(s.Paths)
		if err != nil {
			return nil, fmt.Errorf("ignoreFields of %s: %w", s.Kind, err)
		}
		out = append(out, ignoreEntry{apiVersion: s.APIVersion, kind: s.Kind, paths: paths})
	}
	return out, nil
}

// For returns the ignored paths of an object of this apiVersion and kind.
func (s IgnoreSet) For(apiVersion, kind string) [][]string {
	var out [][]string
	for _, e := range s {
		if e.kind == kind && (e.apiVersion == "" || e.apiVersion == apiVersion) {
			out = append(out, e.paths...)
		}
	}
	return out
}
