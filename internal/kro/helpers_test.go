package kro

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// node returns a plan's result for one resource.
func node(plan *Plan, id string) NodeResult {
	for _, n := range plan.Nodes {
		if n.ID == id {
			return n
		}
	}
	return NodeResult{}
}

func configMap(namespace, name string, data map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	obj.Object["data"] = d
	return obj
}

// defaulted applies the generated CRD's defaults to an instance, as the spoke's API server does
// when the instance is created.
func defaulted(t testing.TB, c *Compiled, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	crd := c.CRD()
	var internal apiextensions.JSONSchemaProps
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	out := obj.DeepCopy()
	defaulting.Default(out.Object, structural)
	return out
}
