package intern

import "sync"

// Table interns strings. Its zero value is not usable; create one with NewTable.
type Table struct {
	mu        sync.Mutex
	limit     int
	maxLen    int
	current   map[string]entry
	previous  map[string]entry
	interned  uint64
	allocated uint64
}

// NewTable returns a table that keeps up to about 2×limit strings, each at most maxLen bytes
// long (longer strings are rarely shared and would pin much memory).
func NewTable(limit, maxLen int) *Table {
	return &Table{limit: limit, maxLen: maxLen, current: map[string]entry{}, previous: map[string]entry{}}
}

// entry is an interned string and the same string in an interface, so that decoded values
// (strings held as any) share one boxed copy as well.
type entry struct {
	s     string
	boxed any
}

// String returns the table's copy of s, adding s when the table has none.
func (t *Table) String(s string) string { return t.lookup(s).s }

func (t *Table) lookup(s string) entry {
	if len(s) == 0 || len(s) > t.maxLen {
		return entry{s: s, boxed: s}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.current[s]; ok {
		t.interned++
		return e
	}
	if e, ok := t.previous[s]; ok {
		t.interned++
		t.add(e)
		return e
	}
	t.allocated++
	e := entry{s: s, boxed: s}
	t.add(e)
	return e
}

func (t *Table) add(e entry) {
	if len(t.current) >= t.limit {
		t.previous, t.current = t.current, make(map[string]entry, t.limit/4)
	}
	t.current[e.s] = e
}

// Value interns every string of a decoded JSON value in place: map keys, string values and
// the strings of nested maps and lists. It returns the value to store in place of v.
func (t *Table) Value(v any) any {
	switch v := v.(type) {
	case string:
		return t.lookup(v).boxed
	case map[string]any:
		for k, e := range v {
			// Assigning an equal key replaces the stored key with the interned one.
			v[t.String(k)] = t.Value(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = t.Value(e)
		}
		return v
	}
	return v
}

// Stats returns how many strings were found in the table and how many were added to it.
func (t *Table) Stats() (interned, added uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interned, t.allocated
}
