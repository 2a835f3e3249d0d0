package work_test

import (
	"encoding/json"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
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

// TestConfined: changes as Changes makes them for the hub's own objects pass; a change of an
// object the revision lacks, or one that makes another object of its own, is refused.
func TestConfined(t *testing.T) {
	cm := object("ConfigMap", "settings", map[string]any{"data": map[string]any{"mode": "eu"}})
	web := object("Deployment", "web", nil)
	base := []*unstructured.Unstructured{cm, web}
	changed := cm.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, "us", "data", "mode")
	extra := object("ConfigMap", "extra", nil)
	renamed := cm.DeepCopy()
	renamed.SetName("other")
	moved := cm.DeepCopy()
	moved.SetNamespace("kube-system")
	rekinded := cm.DeepCopy()
	rekinded.SetAPIVersion("rbac.authorization.k8s.io/v1")
	rekinded.SetKind("ClusterRoleBinding")
	rekinded.SetNamespace("")
	for _, c := range []struct {
		name string
		objs []*unstructured.Unstructured
		ok   bool
	}{
		{"a change and an omission", []*unstructured.Unstructured{changed}, true},
		{"an object added", []*unstructured.Unstructured{cm, web, extra}, false},
	} {
		changes, err := work.Changes(base, c.objs)
		if err != nil {
			t.Fatal(err)
		}
		if err := work.Confined(base, changes); (err == nil) != c.ok || (err != nil && !errors.Is(err, work.ErrNotConfined)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Changes never writes these; a record's writer other than the hub could.
	key := render.Key(cm)
	for name, obj := range map[string]*unstructured.Unstructured{"renamed": renamed, "moved": moved, "another kind": rekinded} {
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		changes := []flotillav1.ObjectChange{{Object: key, Patch: &apiextensionsv1.JSON{Raw: raw}}}
		if err := work.Confined(base, changes); !errors.Is(err, work.ErrNotConfined) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := work.Confined(base, []flotillav1.ObjectChange{{Object: "/ConfigMap/team/absent", Omit: true}}); !errors.Is(err, work.ErrNotConfined) {
		t.Errorf("an omission of an object the revision lacks: %v", err)
	}
}
