package deliver

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// errInvalidName marks an object whose name or namespace cannot be part of an API path.
var errInvalidName = errors.New("invalid name")

// checkName refuses an object whose name or namespace would change the API path its requests
// are sent to ("..", "a/b", "%2e%2e"): a manifest document's metadata is whatever its author
// wrote, and the request's path is built from it. The name must be a valid path segment (what
// every kind's name is, whatever its own rules add; the cluster checks those), the namespace a
// DNS label, as Kubernetes requires. Only that object is refused: the others of the delivery
// go ahead.
func checkName(obj *unstructured.Unstructured) error {
	var problems []string
	if errs := content.IsPathSegmentName(obj.GetName()); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("name %q: %s", obj.GetName(), strings.Join(errs, "; ")))
	}
	if ns := obj.GetNamespace(); ns != "" {
		if errs := validation.ValidateNamespaceName(ns, false); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("namespace %q: %s", ns, strings.Join(errs, "; ")))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s: %w; it is not delivered", obj.GetKind(), strings.Join(problems, ", "), errInvalidName)
}
