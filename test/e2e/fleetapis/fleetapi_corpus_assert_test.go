package fleetapis

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kro's chainsaw cases check objects with partial ones (*-assert.yaml): every field the partial
// object has must be in the real one with that value, lists element by element and of the same
// length (or, for a shorter list, each matching one of the real ones). Their only projection is a filter of a list by type, which is all matchPartial knows.

// projection is chainsaw's `(conditions[?type == 'Ready'])`: a list filtered by a field.
var projection = regexp.MustCompile(`^\((\w+)\[\?(\w+) == '([^']*)'\]\)$`)

// matchPartial says where actual differs from the partial object want.
func matchPartial(path string, want, actual any) error {
	switch w := want.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v, want an object", path, actual)
		}
		for key, wv := range w {
			if m := projection.FindStringSubmatch(key); m != nil {
				list, _ := a[m[1]].([]any)
				var filtered []any
				for _, item := range list {
					if obj, ok := item.(map[string]any); ok && fmt.Sprint(obj[m[2]]) == m[3] {
						filtered = append(filtered, item)
					}
				}
				if err := matchPartial(path+"."+key, wv, filtered); err != nil {
					return err
				}
				continue
			}
			av, found := a[key]
			if !found {
				return fmt.Errorf("%s.%s missing", path, key)
			}
			if err := matchPartial(path+"."+key, wv, av); err != nil {
				return err
			}
		}
		return nil
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return fmt.Errorf("%s: %v, want a list", path, actual)
		}
		if len(a) == len(w) {
			for i := range w {
				if err := matchPartial(fmt.Sprintf("%s[%d]", path, i), w[i], a[i]); err != nil {
					return err
				}
			}
			return nil
		}
		// A shorter list (cel-random's one Ready condition among kro's four): each item must
		// match one of the real list's.
		for i := range w {
			if !slices.ContainsFunc(a, func(item any) bool { return matchPartial("", w[i], item) == nil }) {
				return fmt.Errorf("%s: no item like %v in %v", path, w[i], a)
			}
		}
		return nil
	default:
		if fmt.Sprint(want) != fmt.Sprint(actual) {
			return fmt.Errorf("%s = %v, want %v", path, actual, want)
		}
		return nil
	}
}

// checkAssert finds the object a partial object names, on a spoke and in namespace (when the
// kind is namespaced there), and matches it.
func checkAssert(t *testing.T, kubeconfig, namespace string, want *unstructured.Unstructured) error {
	gv, err := schema.ParseGroupVersion(want.GetAPIVersion())
	if err != nil {
		return err
	}
	resource := strings.ToLower(want.GetKind())
	if gv.Group != "" {
		resource += "." + gv.Version + "." + gv.Group
	}
	args := []string{"get", resource, want.GetName()}
	if gv.Group != "apiextensions.k8s.io" {
		args = append(args, "-n", namespace)
	}
	out, err := kubectlStdout(t, kubeconfig, append(args, "-o", "json")...)
	if err != nil {
		return err
	}
	actual := map[string]any{}
	if err := json.Unmarshal([]byte(out), &actual); err != nil {
		return err
	}
	return matchPartial(want.GetKind()+"/"+want.GetName(), want.Object, actual)
}
