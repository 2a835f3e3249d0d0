package decide

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/drift"
)

func TestIgnoredFields(t *testing.T) {
	deployment := func(share string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(2)}}}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetName("web")
		if share != "" {
			u.SetAnnotations(map[string]string{flotillav1.AnnotationShare: share})
		}
		return u
	}
	set, err := drift.NewIgnoreSet([]flotillav1.IgnoreFields{{Kind: "Deployment", Paths: []string{"/spec/paused"}}})
	if err != nil {
		t.Fatal(err)
	}
	paused, replicas := []string{"spec", "paused"}, []string{"spec", "replicas"}
	tests := []struct {
		name          string
		desired, live *unstructured.Unstructured
		want          [][]string
	}{
		{"no share: the owner's ignoreFields", deployment(""), deployment(""), [][]string{paused}},
		{"the share the copy carries: the HPA's replicas are left", deployment("2"), deployment("2"), [][]string{paused, replicas}},
		{"a new share: the replicas are written", deployment("3"), deployment("2"), [][]string{paused}},
		{"a copy without the annotation (an HPA just added): written once", deployment("2"), deployment(""), [][]string{paused}},
		{"no copy on the cluster", deployment("2"), nil, [][]string{paused}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IgnoredFields(set, tt.desired, tt.live); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("IgnoredFields = %v, want %v", got, tt.want)
			}
		})
	}
}
