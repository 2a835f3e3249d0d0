package decide

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Describe names an object the way results, Events and plans name it: kind.group
// namespace/name, or kind.group/name when it is cluster-scoped. One spelling everywhere lets
// a user match a plan's line with a delivery's message.
func Describe(o *unstructured.Unstructured) string {
	kind := strings.ToLower(o.GetKind())
	if g := o.GroupVersionKind().Group; g != "" {
		kind += "." + g
	}
	if o.GetNamespace() == "" {
		return kind + "/" + o.GetName()
	}
	return kind + " " + o.GetNamespace() + "/" + o.GetName()
}
