package propagation

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// deliveredKinds is the union of the kinds delivered before and the kinds of objs, as
// group/version/Kind strings, sorted.
func deliveredKinds(previous []string, objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	for _, k := range previous {
		seen[k] = true
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		seen[gvk.Group+"/"+gvk.Version+"/"+gvk.Kind] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseKinds reads group/version/Kind strings; malformed entries are skipped.
func parseKinds(kinds []string) []schema.GroupVersionKind {
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
