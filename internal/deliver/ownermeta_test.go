package deliver

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func metaObject(labels, annotations map[string]string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace("team")
	u.SetName("w1")
	u.SetResourceVersion("7")
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	u.SetFinalizers(finalizers)
	return u
}

// The owner's metadata is written only where it lacks something, with the resourceVersion it
// was read at; keys and finalizers others set are kept, and a release removes only the
// owner's own finalizer.
func TestOwnerMetaPatch(t *testing.T) {
	want := &OwnerMeta{Object: metaObject(map[string]string{"a": "1"}, map[string]string{"inv": "x"}, "kro.run/finalizer")}
	cases := []struct {
		name   string
		meta   *OwnerMeta
		live   *unstructured.Unstructured
		patch  map[string]any
		needed bool
	}{
		{"held already", want, metaObject(map[string]string{"a": "1", "user": "u"}, map[string]string{"inv": "x"}, "other", "kro.run/finalizer"), nil, false},
		{"all missing", want, metaObject(map[string]string{"user": "u"}, nil, "other"),
			map[string]any{"resourceVersion": "7", "labels": map[string]any{"a": "1"}, "annotations": map[string]any{"inv": "x"}, "finalizers": []any{"other", "kro.run/finalizer"}}, true},
		{"one annotation changed", want, metaObject(map[string]string{"a": "1"}, map[string]string{"inv": "old"}, "kro.run/finalizer"),
			map[string]any{"resourceVersion": "7", "annotations": map[string]any{"inv": "x"}}, true},
		{"release", &OwnerMeta{Object: want.Object, Release: true}, metaObject(nil, nil, "other", "kro.run/finalizer"),
			map[string]any{"resourceVersion": "7", "finalizers": []any{"other"}}, true},
		{"released already", &OwnerMeta{Object: want.Object, Release: true}, metaObject(nil, nil, "other"), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			patch, needed := ownerMetaPatch(c.meta.Object, c.meta.Release, c.live)
			if needed != c.needed {
				t.Fatalf("needed = %v, want %v (patch %v)", needed, c.needed, patch)
			}
			if needed && !reflect.DeepEqual(patch, map[string]any{"metadata": c.patch}) {
				t.Fatalf("patch = %v, want metadata %v", patch, c.patch)
			}
		})
	}
	if ownerMetaHash(want) == ownerMetaHash(&OwnerMeta{Object: want.Object, Release: true}) {
		t.Error("a release hashes like the metadata it releases")
	}
	if ownerMetaHash(want) == ownerMetaHash(&OwnerMeta{Object: want.Object, AnnotationsAfterPrune: map[string]string{"inv": ""}}) {
		t.Error("the inventory after the prune is not part of the hash")
	}
}

// Deletion waves run from the highest order down; objects without a valid order go last.
func TestDeletionWaves(t *testing.T) {
	obj := func(name, order string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetName(name)
		if order != "" {
			u.SetAnnotations(map[string]string{"order": order})
		}
		return u
	}
	waves := deletionWaves("order", []*unstructured.Unstructured{
		obj("cm", "1"), obj("svc", "3"), obj("deploy", "2"), obj("none", ""), obj("bad", "x"), obj("svc2", "3"),
	})
	var got [][]string
	for _, w := range waves {
		var names []string
		for _, o := range w.objects {
			names = append(names, o.GetName())
		}
		got = append(got, names)
	}
	want := [][]string{{"svc", "svc2"}, {"deploy"}, {"cm"}, {"none", "bad"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("waves = %v, want %v", got, want)
	}
}
