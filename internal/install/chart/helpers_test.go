package chart

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// chartDir is the chart's directory in the repository, which the binary embeds.
var chartDir = filepath.Join("..", "..", "..", "charts", Name)

// render renders the embedded chart in namespace with values, failing the test on an error.
func render(t *testing.T, namespace string, values map[string]any) *Rendering {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(c, Options{Namespace: namespace, Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find returns the rendered object of kind and name, failing the test when there is none.
func find(t *testing.T, r *Rendering, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the chart renders no %s %s", kind, name)
	return nil
}

// typed decodes u into out, failing the test on any field out's type does not have.
func typed(t *testing.T, u *unstructured.Unstructured, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// set parses helm --set assignments.
func set(t *testing.T, sets ...string) map[string]any {
	t.Helper()
	v, err := Values(nil, sets)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
