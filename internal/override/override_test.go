package override

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func deployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop",
			"labels": map[string]any{"flotilla.dev/managed-by": "flotilla", "flotilla.dev/owner": "x"}},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "registry.example.com/web:1"}}}}},
	}}
}

var (
	eu  = Cluster{Name: "eu-1", Labels: map[string]string{"region": "eu-west"}, Allocatable: map[string]int64{"cpu": 16000}}
	us  = Cluster{Name: "us-1", Labels: map[string]string{"region": "us-east"}, Allocatable: map[string]int64{"cpu": 4000}}
	raw = func(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }
)

func TestApply(t *testing.T) {
	rules := Compile([]flotillav1.Override{
		{Name: "eu-registry", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu-west"}},
			JSONPatch: []flotillav1.JSONPatchOperation{{Op: "replace", Path: "/spec/template/spec/containers/0/image", Value: raw(`"eu.registry.example.com/web:1"`)}}},
		{Name: "replicas-by-capacity", Target: &flotillav1.OverrideTarget{Kind: "Deployment"},
			CEL: &flotillav1.CELOverride{Path: "/spec/replicas", Expression: `cluster.allocatable.cpu >= 8000 ? 6 : 2`}},
		{Name: "tier", ClusterNames: []string{"us-1"}, MergePatch: raw(`{"metadata":{"labels":{"tier":"edge","flotilla.dev/owner":null}}}`)},
		{Name: "other-kind", Target: &flotillav1.OverrideTarget{Kind: "Service"}, MergePatch: raw(`{"spec":{"type":"NodePort"}}`)},
	})
	in := deployment()
	before := in.DeepCopy()

	out, applied, err := Apply(rules, eu, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(applied, []string{"eu-registry", "replicas-by-capacity"}) {
		t.Fatalf("applied %v", applied)
	}
	img, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "containers")
	if img[0].(map[string]any)["image"] != "eu.registry.example.com/web:1" {
		t.Fatalf("image %v", img[0])
	}
	if r, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); r != 6 {
		t.Fatalf("replicas %d, want 6 (an int64, as the API server decodes it)", r)
	}
	if !reflect.DeepEqual(in, before) {
		t.Fatal("Apply modified its input")
	}

	out, applied, err = Apply(rules, us, in)
	if err != nil || !reflect.DeepEqual(applied, []string{"replicas-by-capacity", "tier"}) {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if out.GetLabels()["tier"] != "edge" || out.GetLabels()["flotilla.dev/owner"] != "x" {
		t.Fatalf("labels %v: the rule's label must be set and Flotilla's owner label kept", out.GetLabels())
	}
	if Active(rules[:1], us) || !Active(rules[:1], eu) {
		t.Fatal("Active does not follow the cluster selector")
	}
}

func TestApplyErrorsNameTheRule(t *testing.T) {
	cases := []struct {
		name string
		rule flotillav1.Override
		want string
	}{
		{"missing path", flotillav1.Override{Name: "r1", JSONPatch: []flotillav1.JSONPatchOperation{{Op: "replace", Path: "/spec/nothing/here", Value: raw(`1`)}}}, `override "r1": jsonPatch`},
		{"CEL does not compile", flotillav1.Override{Name: "r2", CEL: &flotillav1.CELOverride{Path: "/spec/replicas", Expression: `cluster.labels[`}}, `override "r2": cel.expression does not compile`},
		{"CEL type error", flotillav1.Override{Name: "r3", CEL: &flotillav1.CELOverride{Path: "/spec/replicas", Expression: `cluster.name + 1`}}, `override "r3": cel.expression`},
		{"CEL over its cost limit", flotillav1.Override{Name: "r4", CEL: &flotillav1.CELOverride{Path: "/spec/replicas",
			Expression: `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))`}}, "cost limit"},
		{"path through a scalar", flotillav1.Override{Name: "r5", CEL: &flotillav1.CELOverride{Path: "/spec/replicas/x", Expression: `1`}}, `override "r5": cel.path`},
		{"identity change", flotillav1.Override{Name: "r6", MergePatch: raw(`{"metadata":{"name":"other"}}`)}, `override "r6": changes apiVersion, kind, name or namespace`},
		{"bad selector", flotillav1.Override{Name: "r7", ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}},
			MergePatch: raw(`{}`)}, `override "r7": clusterSelector`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := Compile([]flotillav1.Override{tc.rule})
			_, _, err := Apply(rules, eu, deployment())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// A broken rule fails only the clusters it matches.
	rules := Compile([]flotillav1.Override{{Name: "eu-only", ClusterNames: []string{"eu-1"}, CEL: &flotillav1.CELOverride{Path: "/spec/replicas", Expression: `(`}}})
	if out, applied, err := Apply(rules, us, deployment()); err != nil || applied != nil || out.GetName() != "web" {
		t.Fatalf("a cluster the broken rule does not match must get the object as rendered: %v %v", applied, err)
	}
}

// FuzzApply checks, for any patch and expression, that Apply never panics, never changes its
// input, and never returns an object that lost its identity or Flotilla's markers.
func FuzzApply(f *testing.F) {
	f.Add(`[{"op":"replace","path":"/spec/replicas","value":5}]`, `{"spec":{"paused":true}}`, `object.spec.replicas * 2`, "/spec/replicas")
	f.Add(`[{"op":"add","path":"/metadata/labels/a","value":"b"}]`, `{"metadata":{"labels":null}}`, `cluster.labels.region`, "/metadata/labels/region")
	f.Add(`[{"op":"remove","path":"/metadata/name"}]`, `{"kind":"Pod"}`, `"x" + cluster.name`, "/spec/template/spec/containers/0/image")
	f.Add(`[]`, `[]`, `{"a": [1, 2.5, null, true]}`, "/spec/extra")
	f.Fuzz(func(t *testing.T, patch, merge, expr, pointer string) {
		var ops []flotillav1.JSONPatchOperation
		specs := []flotillav1.Override{
			{Name: "merge", MergePatch: raw(merge)},
			{Name: "cel", CEL: &flotillav1.CELOverride{Path: pointer, Expression: expr}},
		}
		if json.Unmarshal([]byte(patch), &ops) == nil && len(ops) > 0 {
			specs = append(specs, flotillav1.Override{Name: "patch", JSONPatch: ops})
		}
		for _, s := range specs {
			in := deployment()
			before := in.DeepCopy()
			out, _, err := Apply(Compile([]flotillav1.Override{s}), eu, in)
			if !reflect.DeepEqual(in, before) {
				t.Fatal("Apply modified its input")
			}
			if err != nil {
				continue
			}
			if out.GetName() != "web" || out.GetKind() != "Deployment" || out.GetLabels()["flotilla.dev/owner"] != "x" {
				t.Fatalf("rule %s lost the object's identity or markers: %v", s.Name, out.Object)
			}
			if _, err := json.Marshal(out.Object); err != nil {
				t.Fatalf("result is not JSON: %v", err)
			}
			_ = out.DeepCopy() // panics on values an unstructured object cannot hold
		}
	})
}
