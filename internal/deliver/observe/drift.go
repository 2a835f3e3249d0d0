package observe

import "strings"

// Drift is an object found changed on a cluster.
type Drift struct {
	// Object is kind, namespace and name.
	Object string
	// Fields are the JSON pointers that differ; none when the object was deleted.
	Fields  []string
	Deleted bool
	// Manager is the field manager that made the change, when the object's managedFields
	// tell.
	Manager string
	// Corrected says Flotilla re-applied the object.
	Corrected bool
	// Fighting says the object is changed back after every correction: it is corrected only
	// with backoff, until the fight ends or the hub object changes.
	Fighting bool
	// Held says a correction waits for the object's backoff to end: the drift is neither
	// left nor news.
	Held bool
}

// Describe says what changed and who changed it, for conditions and Events.
func (d Drift) Describe() string {
	s := d.Object
	switch {
	case d.Fighting && d.Deleted:
		s += " is deleted again after every correction"
	case d.Fighting:
		s += " is changed back after every correction, at " + strings.Join(d.Fields, ", ")
	case d.Deleted:
		s += " was deleted"
	default:
		s += " changed at " + strings.Join(d.Fields, ", ")
	}
	if d.Manager != "" {
		s += " by " + d.Manager
	}
	return s
}

// SameFields reports whether two drifts are at the same fields.
func SameFields(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
