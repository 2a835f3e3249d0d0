package drift

import (
	"k8s.io/apimachinery/pkg/runtime"
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
