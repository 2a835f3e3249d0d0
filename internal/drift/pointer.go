package drift

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-openapi/jsonpointer"
)

// ParsePointer splits a JSON pointer ("/spec/replicas", "/metadata/labels/app.kubernetes.io~1name")
// into unescaped segments. The empty pointer, "/" and pointers that do not start with "/" are
// rejected: Flotilla never replaces a whole object through a pointer. So is a ~ that escapes
// nothing, which the library would keep as it is.
func ParsePointer(p string) ([]string, error) {
	ptr, err := jsonpointer.New(p)
	if err != nil || len(p) < 2 {
		return nil, fmt.Errorf("JSON pointer %q must start with / and name a field, e.g. /spec/replicas", p)
	}
	for _, s := range strings.Split(p[1:], "/") {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(s, "~0", ""), "~1", ""), "~") {
			return nil, fmt.Errorf("JSON pointer %q: ~ must be escaped as ~0 (and / as ~1)", p)
		}
	}
	return ptr.DecodedTokens(), nil
}

// Get returns the value at a parsed pointer, and whether it exists.
func Get(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, seg := range path {
		next, _, err := jsonpointer.GetForToken(cur, seg)
		if err != nil {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// Set puts value at a parsed pointer. Unlike the library's Set, it creates missing maps on the
// way, keeps a null (the library deletes the key) and sets only a list item that exists (the
// library appends for "-"). It fails when the path runs through a value that is neither a map
// nor a list, or through a list index out of range.
func Set(obj map[string]any, path []string, value any) error {
	if len(path) == 0 {
		return nil
	}
	var parent any = obj
	for i, seg := range path[:len(path)-1] {
		if m, isMap := parent.(map[string]any); isMap && m[seg] == nil {
			m[seg] = map[string]any{}
		}
		next, _, err := jsonpointer.GetForToken(parent, seg)
		if err != nil {
			return fmt.Errorf("%s: %w", pointerOf(path[:i+1]), err)
		}
		parent = next
	}
	last := path[len(path)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = value
	case []any:
		idx, err := strconv.Atoi(last)
		if err != nil || idx < 0 || idx >= len(c) {
			return fmt.Errorf("%s: no list item %q", pointerOf(path), last)
		}
		c[idx] = value
	default:
		return fmt.Errorf("%s: not an object or a list", pointerOf(path[:len(path)-1]))
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

// pointerOf is the JSON pointer of parsed segments.
func pointerOf(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(jsonpointer.Escape(s))
	}
	return b.String()
}
