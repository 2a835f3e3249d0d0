package render

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KindString writes a kind as group/version/Kind ("/v1/ConfigMap" for the core group), the
// form kept in a Delivery record's spec.kinds.
func KindString(gvk schema.GroupVersionKind) string {
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// Kinds returns the sorted, distinct kinds of objs and of extra, as KindStrings.
func Kinds(objs []*unstructured.Unstructured, extra ...string) []string {
	seen := map[string]bool{}
	for _, k := range extra {
		seen[k] = true
	}
	for _, o := range objs {
		seen[KindString(o.GroupVersionKind())] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseKinds reads KindStrings; malformed entries are skipped.
func ParseKinds(kinds []string) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(kinds))
	for _, k := range kinds {
		parts := strings.Split(k, "/")
		if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
			continue
		}
		out = append(out, schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]})
	}
	return out
}
