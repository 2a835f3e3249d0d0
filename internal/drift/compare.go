package drift

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// maxPaths bounds what Compare reports: enough to say what changed, small enough for status.
const maxPaths = 8

// skipped are fields of a desired object that are never compared: the hash annotation is
// Flotilla's bookkeeping, not a field anyone else should care about.
var skipped = [][]string{{"metadata", "annotations", "flotilla.dev/hash"}}

// Compare returns the JSON pointers of the fields desired sets that live does not hold (at
// most maxPaths, in a stable order), or nil when live holds everything desired sets. Fields
// under an ignored pointer are not compared.
func Compare(desired, live map[string]any, ignore [][]string) []string {
	c := comparer{ignore: append(append([][]string{}, skipped...), ignore...)}
	c.value(nil, desired, live, true)
	return c.paths
}

type comparer struct {
	ignore [][]string
	paths  []string
}

func (c *comparer) differs(path []string) {
	if len(c.paths) < maxPaths {
		c.paths = append(c.paths, pointerOf(path))
	}
}

func (c *comparer) ignored(path []string) bool {
	for _, ig := range c.ignore {
		if hasPrefix(path, ig) {
			return true
		}
	}
	return false
}

func hasPrefix(path, prefix []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// value compares one desired value with the live one at path; present says whether live has
// the field at all.
func (c *comparer) value(path []string, desired, live any, present bool) {
	if len(c.paths) >= maxPaths || c.ignored(path) {
		return
	}
	if !present || live == nil {
		if m, ok := desired.(map[string]any); ok {
			// Report the missing fields themselves, so ignored ones stay out of it.
			for _, k := range sortedKeys(m) {
				c.value(append(path[:len(path):len(path)], k), m[k], nil, false)
			}
			return
		}
		if !empty(desired) {
			c.differs(path)
		}
		return
	}
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			c.differs(path)
			return
		}
		for _, k := range sortedKeys(d) {
			lv, ok := l[k]
			c.value(append(path[:len(path):len(path)], k), d[k], lv, ok)
		}
	case []any:
		l, ok := live.([]any)
		if !ok {
			c.differs(path)
			return
		}
		c.list(path, d, l)
	default:
		if !sameScalar(desired, live) {
			c.differs(path)
		}
	}
}

// list compares lists. Lists of objects that share a key field (name, containerPort, ...) are
// matched item by item on that key, so items other managers add are not drift; other lists
// must match position by position and in length.
func (c *comparer) list(path []string, desired, live []any) {
	if key := mergeKey(desired); key != "" {
		for i, d := range desired {
			dm := d.(map[string]any)
			found := false
			for _, l := range live {
				if lm, ok := l.(map[string]any); ok && sameScalar(dm[key], lm[key]) {
					c.value(append(path[:len(path):len(path)], strconv.Itoa(i)), dm, lm, true)
					found = true
					break
				}
			}
			if !found {
				c.differs(append(path[:len(path):len(path)], strconv.Itoa(i)))
			}
		}
		return
	}
	if len(desired) != len(live) {
		c.differs(path)
		return
	}
	for i := range desired {
		c.value(append(path[:len(path):len(path)], strconv.Itoa(i)), desired[i], live[i], true)
	}
}

// mergeKeys are the fields Kubernetes lists of objects are keyed on, most common first.
var mergeKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "ip", "type", "key"}

// mergeKey returns the first key field that every item of a list of objects has, with
// distinct scalar values, or "" when there is none.
func mergeKey(items []any) string {
	if len(items) == 0 {
		return ""
	}
	for _, k := range mergeKeys {
		seen := map[string]bool{}
		ok := true
		for _, it := range items {
			m, isMap := it.(map[string]any)
			if !isMap {
				return ""
			}
			v, has := m[k]
			if !has {
				ok = false
				break
			}
			s := fmt.Sprint(v)
			if seen[s] {
				ok = false
				break
			}
			seen[s] = true
		}
		if ok {
			return k
		}
	}
	return ""
}

// empty reports whether a desired value is as good as absent: null, "", an empty map or list.
// The API server drops such values, so their absence is not drift.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

// sameScalar compares two scalars as the API server normalises them.
func sameScalar(a, b any) bool {
	if a == b {
		return true
	}
	af, aNum := number(a)
	bf, bNum := number(b)
	if aNum && bNum {
		return af == bf
	}
	as, bs := scalarString(a), scalarString(b)
	if as == bs && (aNum || bNum) {
		return true // 1 and "1": an int-or-string, or a quantity written as a number
	}
	aq, errA := resource.ParseQuantity(as)
	bq, errB := resource.ParseQuantity(bs)
	return errA == nil && errB == nil && aq.Cmp(bq) == 0
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
