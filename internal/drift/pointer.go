package drift

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePointer splits a JSON pointer ("/spec/replicas", "/metadata/labels/app.kubernetes.io~1name")
// into unescaped segments. The empty pointer and pointers that do not start with "/" are
// rejected: Flotilla never replaces a whole object through a pointer.
func ParsePointer(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") || len(p) < 2 {
		return nil, fmt.Errorf("JSON pointer %q must start with / and name a field, e.g. /spec/replicas", p)
	}
	raw := strings.Split(p[1:], "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(s, "~0", ""), "~1", ""), "~") {
			return nil, fmt.Errorf("JSON pointer %q: ~ must be escaped as ~0 (and / as ~1)", p)
		}
		out[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return out, nil
}

// escape makes one segment of a JSON pointer.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Get returns the value at a parsed pointer, and whether it exists.
func Get(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, seg := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Set puts value at a parsed pointer, creating missing maps on the way. It fails when the path
// runs through a value that is neither a map nor a list, or through a list index out of range.
func Set(obj map[string]any, path []string, value any) error {
	var parent any = obj
	for i, seg := range path {
		last := i == len(path)-1
		switch c := parent.(type) {
		case map[string]any:
			if last {
				c[seg] = value
				return nil
			}
			next, ok := c[seg]
			if !ok || next == nil {
				next = map[string]any{}
				c[seg] = next
			}
			parent = next
		case []any:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(c) {
				return fmt.Errorf("%s: no list item %q", pointerOf(path[:i+1]), seg)
			}
			if last {
				c[idx] = value
				return nil
			}
			parent = c[idx]
		default:
			return fmt.Errorf("%s: not an object or a list", pointerOf(path[:i]))
		}
	}
	return nil
}

// Remove deletes the map entry at a parsed pointer, if it exists. List items are not removed
// (that would renumber the items after them).
func Remove(obj map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	parent, ok := Get(obj, path[:len(path)-1])
	if m, isMap := parent.(map[string]any); ok && isMap {
		delete(m, path[len(path)-1])
	}
}

func pointerOf(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(escape(s))
	}
	return b.String()
}
