package drift

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// Change is one field that differs between two versions of an object.
type Change struct {
	Path string
	// Old and New are the values before and after; nil when the field is absent.
	Old, New any
}

// maxChanges bounds what Diff reports.
const maxChanges = 64

// serverOwned are fields the API server sets on every write; they say nothing about content.
var serverOwned = [][]string{
	{"metadata", "resourceVersion"}, {"metadata", "generation"}, {"metadata", "managedFields"},
	{"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"status"},
}

// Diff lists the fields that differ between before and after (at most maxChanges), leaving
// out what the API server maintains itself (resourceVersion, generation, managedFields, uid,
// creationTimestamp, status). Lists are compared position by position.
func Diff(before, after map[string]any) []Change {
	d := differ{}
	d.walk(nil, before, after, true, true)
	return d.changes
}

type differ struct{ changes []Change }

func (d *differ) add(path []string, old, new any) {
	if len(d.changes) < maxChanges {
		d.changes = append(d.changes, Change{Path: pointerOf(path), Old: old, New: new})
	}
}

func (d *differ) walk(path []string, a, b any, hasA, hasB bool) {
	for _, s := range serverOwned {
		if hasPrefix(path, s) {
			return
		}
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	if aMap && bMap {
		keys := slices.Collect(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			av, okA := am[k]
			bv, okB := bm[k]
			d.walk(append(path[:len(path):len(path)], k), av, bv, okA, okB)
		}
		return
	}
	al, aList := a.([]any)
	bl, bList := b.([]any)
	if aList && bList && len(al) == len(bl) {
		for i := range al {
			d.walk(append(path[:len(path):len(path)], strconv.Itoa(i)), al[i], bl[i], true, true)
		}
		return
	}
	if hasA != hasB || !reflect.DeepEqual(a, b) && !sameScalar(a, b) {
		var old, new any
		if hasA {
			old = a
		}
		if hasB {
			new = b
		}
		d.add(path, old, new)
	}
}
