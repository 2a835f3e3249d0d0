package render

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	gvk := o.GroupVersionKind()
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
	type sortable struct {
		phase int
		key   string
		obj   *unstructured.Unstructured
	}
	s := make([]sortable, len(objs))
	for i, o := range objs {
		s[i] = sortable{phase: Phase(o), key: Key(o), obj: o}
	}
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

// SortForDeletion orders objects for deleting: the reverse of Sort.
func SortForDeletion(objs []*unstructured.Unstructured) {
	Sort(objs)
	for i, j := 0, len(objs)-1; i < j; i, j = i+1, j-1 {
		objs[i], objs[j] = objs[j], objs[i]
	}
}

// IsCRD reports whether an object is a CustomResourceDefinition.
func IsCRD(o *unstructured.Unstructured) bool { return Phase(o) == phaseCRD }
