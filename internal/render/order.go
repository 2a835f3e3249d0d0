package render

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Apply phases: CustomResourceDefinitions first (their kinds must exist before their objects),
// then Namespaces (their contents need them), then everything else. Deletion runs in reverse.
const (
	phaseCRD = iota
	phaseNamespace
	phaseRest
)

// Phase returns the apply phase of an object.
func Phase(o *unstructured.Unstructured) int {
	return PhaseOf(o.GroupVersionKind())
}

// PhaseOf returns the apply phase of objects of a kind.
func PhaseOf(gvk schema.GroupVersionKind) int {
	switch {
	case gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition":
		return phaseCRD
	case gvk.Group == "" && gvk.Kind == "Namespace":
		return phaseNamespace
	}
	return phaseRest
}

// Sort orders objects for applying: by phase, then by key, so the order is deterministic.
// Each object's phase and key are computed once, not at every comparison.
func Sort(objs []*unstructured.Unstructured) {
	s := make([]sortable, len(objs))
	for i, o := range objs {
		s[i] = sortable{phase: Phase(o), key: Key(o), obj: o}
	}
	sortInto(objs, s)
}

// sortable is an object with its phase and key, computed once for sorting.
type sortable struct {
	phase int
	key   string
	obj   *unstructured.Unstructured
}

// sortInto sorts s by phase, then key, and writes its objects into objs in that order.
func sortInto(objs []*unstructured.Unstructured, s []sortable) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].phase != s[j].phase {
			return s[i].phase < s[j].phase
		}
		return s[i].key < s[j].key
	})
	for i := range s {
		objs[i] = s[i].obj
	}
}

// Prepare sorts rendered objects for applying, as Sort does, and returns their Revision and
// Kinds: what an owner's pass needs of its objects, with each object's kind, key and hash read
// once rather than once for each (a pass over a thousand objects walks them once, and each
// walk costs a cache miss or more per object).
func Prepare(objs []*unstructured.Unstructured) (revision string, kinds []string) {
	s := make([]sortable, len(objs))
	hashes := make([]string, len(objs))
	seen := map[string]bool{}
	for i, o := range objs {
		gvk := o.GroupVersionKind()
		key := KeyWith(gvk, o)
		s[i] = sortable{phase: PhaseOf(gvk), key: key, obj: o}
		hashes[i] = key + "=" + HashOf(o)
		if k := KindString(gvk); !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	sortInto(objs, s)
	sort.Strings(kinds)
	if kinds == nil {
		kinds = []string{}
	}
	return revisionOf(hashes), kinds
}

// SortForDeletion orders objects for deleting: the reverse of Sort.
func SortForDeletion(objs []*unstructured.Unstructured) {
	Sort(objs)
	for i, j := 0, len(objs)-1; i < j; i, j = i+1, j-1 {
		objs[i], objs[j] = objs[j], objs[i]
	}
}

// IsCRD reports whether an object is a CustomResourceDefinition.
func IsCRD(o *unstructured.Unstructured) bool { return Phase(o) == phaseCRD }
