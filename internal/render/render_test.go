package render

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

var owner = Owner{Kind: "Propagation", Namespace: "team-a", Name: "web"}

func hubDeployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "team-a", "uid": "u-1", "resourceVersion": "42", "generation": int64(3),
			"creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": []any{map[string]any{"manager": "kubectl"}},
			"ownerReferences": []any{map[string]any{"kind": "X", "name": "y"}}, "finalizers": []any{"f"},
			"labels":      map[string]any{"app": "web"},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}

func TestRenderStripsHubFieldsAndMarksOwnership(t *testing.T) {
	in := hubDeployment()
	out, err := Render(in, owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Object["status"]; ok {
		t.Error("status kept")
	}
	meta := out.Object["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences", "finalizers"} {
		if _, ok := meta[f]; ok {
			t.Errorf("metadata.%s kept", f)
		}
	}
	if out.GetLabels()["app"] != "web" || out.GetAnnotations()["team"] != "a" {
		t.Error("user labels or annotations lost")
	}
	if _, ok := out.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Error("kubectl's last-applied annotation kept")
	}
	if _, ok := out.GetLabels()[flotillav1.LabelManagedBy]; ok || out.GetLabels()[flotillav1.LabelOwner] != owner.LabelValue() ||
		out.GetAnnotations()[flotillav1.AnnotationOwner] != "Propagation/team-a/web" || len(out.GetAnnotations()[flotillav1.AnnotationHash]) != 16 {
		t.Errorf("markers: labels %v annotations %v", out.GetLabels(), out.GetAnnotations())
	}
	if in.Object["status"] == nil || in.GetUID() != "u-1" {
		t.Error("Render modified its input")
	}
}

func TestHashIgnoresHubBookkeepingAndSeesRealChanges(t *testing.T) {
	a, _ := Render(hubDeployment(), owner)
	bumped := hubDeployment()
	bumped.SetResourceVersion("43")
	bumped.SetGeneration(4)
	unstructured.SetNestedField(bumped.Object, int64(1), "status", "readyReplicas")
	b, _ := Render(bumped, owner)
	if a.GetAnnotations()[flotillav1.AnnotationHash] != b.GetAnnotations()[flotillav1.AnnotationHash] {
		t.Error("hash changed with hub-only fields")
	}
	changed := hubDeployment()
	unstructured.SetNestedField(changed.Object, int64(3), "spec", "replicas")
	c, _ := Render(changed, owner)
	if a.GetAnnotations()[flotillav1.AnnotationHash] == c.GetAnnotations()[flotillav1.AnnotationHash] {
		t.Error("hash did not change with spec")
	}
	other, _ := Render(hubDeployment(), Owner{Kind: "Propagation", Namespace: "team-a", Name: "other"})
	if a.GetAnnotations()[flotillav1.AnnotationHash] == other.GetAnnotations()[flotillav1.AnnotationHash] {
		t.Error("hash did not change with the owner")
	}
	again, _ := Render(a, owner) // re-rendering a rendered object is stable
	if again.GetAnnotations()[flotillav1.AnnotationHash] != a.GetAnnotations()[flotillav1.AnnotationHash] {
		t.Error("render is not idempotent")
	}
	if Revision([]*unstructured.Unstructured{a}) == Revision([]*unstructured.Unstructured{c}) {
		t.Error("revision did not change")
	}
}

func TestRenderRejectsIncompleteObjects(t *testing.T) {
	if _, err := Render(&unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}, owner); err == nil {
		t.Fatal("an object without apiVersion and name was rendered")
	}
}

func TestOwner(t *testing.T) {
	long := Owner{Kind: "ClusterPropagation", Name: strings.Repeat("x", 253)}
	if v := long.LabelValue(); len(v) > 63 || v != long.LabelValue() {
		t.Fatalf("label value %q", v)
	}
	onSpoke := Owner{Kind: "Widget.example.dev", Namespace: "team", Name: "w1", Cluster: "eu-1"}
	if onSpoke.String() != "Widget.example.dev/team/w1@eu-1" || !onSpoke.OnSpoke() || owner.OnSpoke() {
		t.Fatalf("owner on a spoke: %q", onSpoke.String())
	}
	if onSpoke.LabelValue() == (Owner{Kind: onSpoke.Kind, Namespace: "team", Name: "w1", Cluster: "eu-2"}).LabelValue() {
		t.Fatal("owners of the same name on two spokes share a label value")
	}
	for _, o := range []Owner{owner, {Kind: "ClusterPropagation", Name: "crds"}, onSpoke, {Kind: "Node", Name: "n1", Cluster: "a"}} {
		got, ok := ParseOwner(o.String())
		if !ok || got != o {
			t.Errorf("ParseOwner(%q) = %+v", o.String(), got)
		}
	}
	for _, bad := range []string{"nonsense", "Widget/team/w1@", "a/b/c/d@x"} {
		if _, ok := ParseOwner(bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestSortPutsCRDsThenNamespacesFirst(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "a", "web"),
		obj("v1", "Namespace", "", "a"),
		obj("example.com/v1", "Widget", "a", "w"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		obj("v1", "ConfigMap", "a", "cfg"),
	}
	Sort(objs)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	if got := strings.Join(kinds, ","); got != "CustomResourceDefinition,Namespace,ConfigMap,Deployment,Widget" {
		t.Fatalf("order %s", got)
	}
	SortForDeletion(objs)
	if objs[0].GetKind() != "Widget" || objs[len(objs)-1].GetKind() != "CustomResourceDefinition" {
		t.Fatalf("deletion order starts with %s, ends with %s", objs[0].GetKind(), objs[len(objs)-1].GetKind())
	}
}

func TestParseManifests(t *testing.T) {
	objs, err := ParseManifests("ConfigMap addons", map[string]string{
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if strings.Join(names, ",") != "one,ns,two" {
		t.Fatalf("names %v", names)
	}
	for data, want := range map[string]string{
		"kind: ConfigMap\nmetadata:\n  name: x\n": `key "k" document 1: apiVersion, kind and metadata.name are required`,
		"apiVersion: v1\nkind: [unclosed":         `ConfigMap addons key "k" document 1`,
	} {
		if _, err := ParseManifests("ConfigMap addons", map[string]string{"k": data}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want %q", err, want)
		}
	}
}

// TestManifestErrorRedacted: a decoder error can quote the document; the redacted message of a
// Secret source never does, and still says where the document is.
func TestManifestErrorRedacted(t *testing.T) {
	const secret = "hunter2-s3cr3t-value"
	for _, tc := range []struct {
		data          string
		quotes        bool // the decoder's own message quotes the value
		want, wantNot string
	}{
		{data: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\nstringData:\n  port: !!int " + secret + "\n", quotes: true,
			want: `Secret db key "k" document 1: not valid YAML or JSON (the parser's message`},
		{data: "apiVersion: v1\nkind: Secret\n---\na: b\n  c: " + secret + "\n",
			want: `Secret db key "k" document 1: apiVersion, kind and metadata.name are required`},
		{data: "a: b\n\tc: " + secret + "\n", want: "not valid YAML or JSON at line 2"},
		{data: "a: *" + secret + "\n", quotes: true, want: "not valid YAML or JSON"},
	} {
		_, err := ParseManifests("Secret db", map[string]string{"k": tc.data})
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Fatalf("%q: error %v is not a *ManifestError", tc.data, err)
		}
		if tc.quotes && !strings.Contains(err.Error(), secret[:10]) {
			t.Errorf("%q: the decoder no longer quotes the value (%v); the case proves nothing", tc.data, err)
		}
		got := me.Redacted()
		if strings.Contains(got, secret[:7]) {
			t.Errorf("%q: redacted message %q quotes the data", tc.data, got)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q: redacted message %q lacks %q", tc.data, got, tc.want)
		}
	}
}

func TestManaged(t *testing.T) {
	sel := ManagedSelector()
	for _, tt := range []struct {
		name     string
		labels   map[string]string
		managed  bool
		selected bool // by the spoke caches' selector
	}{
		{"as Render marks it", map[string]string{flotillav1.LabelOwner: owner.LabelValue(), "app": "web"}, true, true},
		{"as earlier releases marked it", map[string]string{flotillav1.LabelManagedBy: "flotilla", flotillav1.LabelOwner: owner.LabelValue()}, true, true},
		{"an earlier release's, its owner label removed", map[string]string{flotillav1.LabelManagedBy: "flotilla"}, true, false},
		{"someone else's managed-by", map[string]string{flotillav1.LabelManagedBy: "helm"}, false, false},
		{"unlabelled", nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Managed(tt.labels); got != tt.managed {
				t.Errorf("Managed = %v, want %v", got, tt.managed)
			}
			if got := sel.Matches(labels.Set(tt.labels)); got != tt.selected {
				t.Errorf("selected = %v, want %v", got, tt.selected)
			}
		})
	}
	out, err := Render(hubDeployment(), owner)
	if err != nil {
		t.Fatal(err)
	}
	if !Managed(out.GetLabels()) || !sel.Matches(labels.Set(out.GetLabels())) {
		t.Errorf("a rendered object is not recognized as Flotilla's: %v", out.GetLabels())
	}
}

// Prepare sorts as Sort does and returns what Revision and Kinds return of the same objects.
func TestPrepareIsSortRevisionAndKinds(t *testing.T) {
	obj := func(apiVersion, kind, ns, name, hash string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion(apiVersion)
		o.SetKind(kind)
		o.SetNamespace(ns)
		o.SetName(name)
		o.SetAnnotations(map[string]string{flotillav1.AnnotationHash: hash})
		return o
	}
	objs := []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "b", "web", "h1"),
		obj("v1", "ConfigMap", "b", "z", "h2"),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.dev", "h3"),
		obj("v1", "Namespace", "", "b", "h4"),
		obj("v1", "ConfigMap", "a", "y", "h5"),
		obj("apps/v1", "Deployment", "a", "api", "h6"),
	}
	want := slices.Clone(objs)
	Sort(want)
	wantRevision, wantKinds := Revision(want), Kinds(want)
	got := slices.Clone(objs)
	revision, kinds := Prepare(got)
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", keys(got), keys(want))
	}
	if revision != wantRevision || !slices.Equal(kinds, wantKinds) {
		t.Errorf("revision %s kinds %v, want %s %v", revision, kinds, wantRevision, wantKinds)
	}
	if revision, kinds := Prepare(nil); revision != Revision(nil) || kinds == nil || len(kinds) != 0 {
		t.Errorf("no objects: revision %s kinds %#v", revision, kinds)
	}
}

func keys(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = Key(o)
	}
	return out
}
