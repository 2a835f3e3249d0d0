package drift

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manager names the field manager that most likely made a drift: among the managers other
// than self, the latest to write one of the drifted fields (judged by the field's name in its
// field set), or else the latest to write anything. It returns "" when there is none.
func Manager(entries []metav1.ManagedFieldsEntry, paths []string, self string) string {
	var best, latest *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if e.Manager == self {
			continue
		}
		if latest == nil || later(e, latest) {
			latest = e
		}
		if touches(e, paths) && (best == nil || later(e, best)) {
			best = e
		}
	}
	if best == nil {
		best = latest
	}
	if best == nil {
		return ""
	}
	name := best.Manager
	if best.Operation != "" {
		name += " (" + string(best.Operation)
		if best.Subresource != "" {
			name += " " + best.Subresource
		}
		name += ")"
	}
	return name
}

func later(a, b *metav1.ManagedFieldsEntry) bool {
	if a.Time == nil {
		return false
	}
	return b.Time == nil || a.Time.After(b.Time.Time)
}

// touches reports whether a field set mentions the last field name of one of the paths.
func touches(e *metav1.ManagedFieldsEntry, paths []string) bool {
	if e.FieldsV1 == nil {
		return false
	}
	for _, p := range paths {
		segs, err := ParsePointer(p)
		if err != nil {
			continue
		}
		for i := len(segs) - 1; i >= 0; i-- {
			if _, isIndex := indexOf(segs[i]); isIndex {
				continue
			}
			if bytes.Contains(e.FieldsV1.GetRawBytes(), []byte(`"f:`+segs[i]+`"`)) {
				return true
			}
			break
		}
	}
	return false
}

func indexOf(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}
