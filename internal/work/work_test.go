package work_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/work"
)

func object(kind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "team", "annotations": map[string]any{"flotilla.dev/hash": name + "-h"}}}}
	if kind == "Deployment" {
		u.SetAPIVersion("apps/v1")
	}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// TestRoundTrip: what a cluster runs is recovered exactly from the revision's objects and the
// changes, whatever the cluster's own changes were.
func TestRoundTrip(t *testing.T) {
	web := object("Deployment", "web", map[string]any{"spec": map[string]any{"replicas": int64(6), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}}}}})
	cm := object("ConfigMap", "settings", map[string]any{"data": map[string]any{"mode": "eu", "level": "info"}})
	hpa := object("HorizontalPodAutoscaler", "web", map[string]any{"spec": map[string]any{"maxReplicas": int64(10)}})
	base := []*unstructured.Unstructured{web, cm, hpa}
	share := web.DeepCopy()
	_ = unstructured.SetNestedField(share.Object, int64(2), "spec", "replicas")
	overridden := cm.DeepCopy()
	_ = unstructured.SetNestedField(overridden.Object, "us", "data", "mode")
	unstructured.RemoveNestedField(overridden.Object, "data", "level")
	overridden.SetLabels(map[string]string{"region": "us"})
	extra := object("ConfigMap", "extra", map[string]any{"data": map[string]any{"k": "v"}})
	cases := []struct {
		name        string
		objs        []*unstructured.Unstructured
		wantChanges int
	}{
		{"the cluster runs the revision as it is", base, 0},
		{"its share of replicas", []*unstructured.Unstructured{share, cm, hpa}, 1},
		{"overrides change, add and remove fields", []*unstructured.Unstructured{web, overridden, hpa}, 1},
		{"an object withheld there", []*unstructured.Unstructured{share, cm}, 2},
		{"an object only the cluster gets", []*unstructured.Unstructured{web, cm, hpa, extra}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changes, err := work.Changes(base, c.objs)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != c.wantChanges {
				t.Errorf("%d changes, want %d: %+v", len(changes), c.wantChanges, changes)
			}
			got, err := work.Apply(base, changes)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]*unstructured.Unstructured, len(c.objs))
			for i := range c.objs {
				want[i] = c.objs[i].DeepCopy()
			}
			render.Sort(want)
			if len(got) != len(want) {
				t.Fatalf("%d objects, want %d", len(got), len(want))
			}
			for i := range want {
				if !equality.Semantic.DeepEqual(got[i].Object, want[i].Object) {
					t.Errorf("object %d:\n got %v\nwant %v", i, got[i].Object, want[i].Object)
				}
			}
			for _, obj := range base {
				if obj == got[0] {
					t.Error("Apply returned a base object itself, not a copy")
				}
			}
		})
	}
}

func TestApplyRefusesABrokenPatch(t *testing.T) {
	changes, err := work.Changes([]*unstructured.Unstructured{object("ConfigMap", "a", nil)}, []*unstructured.Unstructured{object("ConfigMap", "a", map[string]any{"data": map[string]any{"k": "v"}})})
	if err != nil || len(changes) != 1 {
		t.Fatalf("changes %v, %v", changes, err)
	}
	changes[0].Patch.Raw = []byte("[not json")
	if _, err := work.Apply([]*unstructured.Unstructured{object("ConfigMap", "a", nil)}, changes); err == nil {
		t.Error("a broken patch applied")
	}
}

// TestNoSecretInChanges: a Secret that differs on a cluster is refused, so its data never
// reaches a record that a namespace's viewers may read.
func TestNoSecretInChanges(t *testing.T) {
	secret := object("Secret", "db", map[string]any{"data": map[string]any{"password": "Y2FuYXJ5"}})
	changed := secret.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, "b3RoZXI=", "data", "password")
	if changes, err := work.Changes([]*unstructured.Unstructured{secret}, []*unstructured.Unstructured{changed}); err == nil {
		t.Fatalf("a Secret's change was recorded: %+v", changes)
	}
	if changes, err := work.Changes([]*unstructured.Unstructured{secret}, []*unstructured.Unstructured{secret}); err != nil || len(changes) != 0 {
		t.Fatalf("an unchanged Secret: %v, %v", changes, err)
	}
}
