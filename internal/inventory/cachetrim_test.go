package inventory

import (
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/intern"
)

func TestSpokeObjectTransformStripsManagedFieldsAndSharesStrings(t *testing.T) {
	transform := spokeObjectTransform(intern.NewTable(100, 1024))
	cached := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "web", "namespace": "team",
				"managedFields": []any{map[string]any{"manager": "flotilla"}}},
			"data": map[string]any{"payload": strings.Repeat("x", 256)},
		}}
		out, err := transform(u)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*unstructured.Unstructured)
	}
	a, b := cached(), cached() // the same object cached for two clusters
	if _, found, _ := unstructured.NestedSlice(a.Object, "metadata", "managedFields"); found {
		t.Error("managedFields kept in the cache")
	}
	pa, _, _ := unstructured.NestedString(a.Object, "data", "payload")
	pb, _, _ := unstructured.NestedString(b.Object, "data", "payload")
	if pa != pb || unsafe.StringData(pa) != unsafe.StringData(pb) {
		t.Error("the payload is held twice")
	}
}
