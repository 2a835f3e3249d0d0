package plan

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/drift"
)

// Masked stands in for a Secret value in a Change, as `kubectl diff` masks them: a value is
// never shown, and a value that changes says which side is which. It prints without quotes.
type Masked string

func (m Masked) String() string { return string(m) }

// The masks, the same as `kubectl diff` prints.
const (
	MaskedValue  Masked = "***"
	MaskedBefore Masked = "*** (before)"
	MaskedAfter  Masked = "*** (after)"
)

// secretPaths are where a Secret holds values; "*" matches any key. kubectl's last-applied
// annotation repeats data and stringData, so it is masked too.
var secretPaths = [][]string{
	{"data", "*"},
	{"stringData", "*"},
	{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"},
}

// redact masks the values of a core Secret in changes; changes of other kinds are returned as
// they are. A change to a value shows MaskedBefore and MaskedAfter; an added or removed value
// shows MaskedValue on the side where it exists; a whole data map added or removed shows its
// keys, each with MaskedValue.
func redact(gvk schema.GroupVersionKind, changes []drift.Change) []drift.Change {
	if gvk.Group != "" || gvk.Kind != "Secret" {
		return changes
	}
	out := make([]drift.Change, len(changes))
	for i, ch := range changes {
		out[i] = drift.Change{Path: ch.Path, Old: maskPresent(ch.Old), New: maskPresent(ch.New)}
		if seg, err := drift.ParsePointer(ch.Path); err == nil {
			out[i].Old, out[i].New = maskIn(seg, ch.Old), maskIn(seg, ch.New)
		} // else not a field path: show that something changed, nothing of what
		if out[i].Old == MaskedValue && out[i].New == MaskedValue {
			out[i].Old, out[i].New = MaskedBefore, MaskedAfter
		}
	}
	return out
}

// maskIn masks what of v, the value at path, lies on a secret path.
func maskIn(path []string, v any) any {
	for _, s := range secretPaths {
		switch {
		case len(path) >= len(s) && matches(path[:len(s)], s):
			return maskPresent(v) // v is a secret value, or inside one
		case len(path) < len(s) && matches(path, s[:len(path)]):
			v = maskBelow(v, s[len(path):]) // v holds secret values below it
		}
	}
	return v
}

// maskBelow returns a copy of v with the values at rest (relative to v) masked.
func maskBelow(v any, rest []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if rest[0] == "*" || rest[0] == k {
			if len(rest) == 1 {
				val = maskPresent(val)
			} else {
				val = maskBelow(val, rest[1:])
			}
		}
		out[k] = val
	}
	return out
}

// maskPresent masks a value that exists; an absent one (nil) stays absent.
func maskPresent(v any) any {
	if v == nil {
		return nil
	}
	return MaskedValue
}

func matches(path, pattern []string) bool {
	for i := range pattern {
		if pattern[i] != "*" && pattern[i] != path[i] {
			return false
		}
	}
	return true
}
