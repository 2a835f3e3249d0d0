package kro

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubernetes-sigs/kro/pkg/graph"
)

// TestCompileCorpus compiles every self-contained RGD of kro's core-kinds corpus against the
// recorded spoke, and checks the generated CRD and the graph's shape.
func TestCompileCorpus(t *testing.T) {
	target := spokeSnapshot(t)
	for _, rel := range corpus() {
		t.Run(rel, func(t *testing.T) {
			rgd := corpusRGD(t, rel)
			c, err := Compile(rgd, target, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			crd := c.CRD()
			wantLabels := map[string]string{
				OwnedLabel: "true", VersionLabel: Version, RGDIDLabel: string(rgd.UID), RGDNameLabel: rgd.Name,
			}
			for k, v := range wantLabels {
				if crd.Labels[k] != v {
					t.Errorf("CRD label %s = %q, want %q", k, crd.Labels[k], v)
				}
			}
			kind := c.InstanceKind()
			if crd.Spec.Group != kind.Group || crd.Spec.Names.Kind != kind.Kind || crd.Name != crd.Spec.Names.Plural+"."+kind.Group {
				t.Errorf("CRD %s: group %s kind %s, instance kind %v", crd.Name, crd.Spec.Group, crd.Spec.Names.Kind, kind)
			}
			if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
				t.Errorf("CRD versions = %+v, want one with a status subresource", crd.Spec.Versions)
			}
			status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
			for _, field := range []string{"state", "conditions"} {
				if _, ok := status.Properties[field]; !ok {
					t.Errorf("status schema lacks %s", field)
				}
			}
			if got, want := len(c.Nodes()), len(rgd.Spec.Resources); got != want {
				t.Errorf("%d nodes, want %d", got, want)
			}
			for _, n := range c.Nodes() {
				if n.ApplyOrder < 1 || n.Resource.Resource == "" || n.Kind.Kind == "" {
					t.Errorf("node %+v", n)
				}
			}
			if c.SpecHash() == "" {
				t.Error("no spec hash")
			}
		})
	}
}

// TestCompileIsKrosBuilder checks that Compile adds labels and nothing else to what kro's own
// builder makes of the same RGD against the same schemas.
func TestCompileIsKrosBuilder(t *testing.T) {
	target := spokeSnapshot(t)
	for _, rel := range []string{"examples/kubernetes/webapp/rg.yaml", "test/upgrade/fixtures/multi-dependency/rgd.yaml"} {
		rgd := corpusRGD(t, rel)
		ours, err := Compile(rgd, target, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		builder, err := graph.NewBuilder(nil, nil, graph.WithSchemaResolver(target.Schemas), graph.WithRESTMapper(target.Mapper))
		if err != nil {
			t.Fatal(err)
		}
		defaultedRGD := rgd.DeepCopy()
		defaultedRGD.Spec.Schema.Group = "kro.run"
		theirs, err := builder.NewResourceGraphDefinition(defaultedRGD, graph.Config{MaxCollectionSize: 1000, MaxCollectionDimensionSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		crd := ours.CRD()
		crd.Labels = nil
		if !reflect.DeepEqual(crd, theirs.CRD) {
			t.Errorf("%s: CRD differs from kro's", rel)
		}
		if !reflect.DeepEqual(ours.TopologicalOrder(), theirs.TopologicalOrder) {
			t.Errorf("%s: order %v, kro's %v", rel, ours.TopologicalOrder(), theirs.TopologicalOrder)
		}
		for _, n := range ours.Nodes() {
			if n.ApplyOrder != theirs.ApplyOrders[n.ID] {
				t.Errorf("%s: %s apply order %d, kro's %d", rel, n.ID, n.ApplyOrder, theirs.ApplyOrders[n.ID])
			}
		}
	}
}

func TestCompileNamesTheMissingKind(t *testing.T) {
	cases := []struct {
		rgd      string
		resource string
		kind     schema.GroupVersionKind
	}{
		// A kind served only once another RGD's CRD is.
		{corpusChained[0], "tenantEnvironment", schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "TenantEnvironment"}},
		// A kind that needs a CRD the spoke lacks.
		{"test/e2e/chainsaw/check-unknown-fields/rgd.yaml", "example", schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "AllowUnknown"}},
	}
	for _, tc := range cases {
		_, err := Compile(corpusRGD(t, tc.rgd), spokeSnapshot(t), DefaultConfig())
		var missing *SchemaNotFoundError
		if !errors.As(err, &missing) || !errors.Is(err, ErrSchemaNotFound) {
			t.Fatalf("%s: %v, want a SchemaNotFoundError", tc.rgd, err)
		}
		if missing.ResourceID != tc.resource || missing.Kind != tc.kind {
			t.Errorf("%s: missing %q %v, want %q %v", tc.rgd, missing.ResourceID, missing.Kind, tc.resource, tc.kind)
		}
		if !strings.Contains(err.Error(), tc.kind.Kind) || !strings.Contains(err.Error(), tc.resource) {
			t.Errorf("%s: message %q names neither kind nor resource", tc.rgd, err)
		}
	}
}

// TestCompileRejectsInvalidGraphs: kro's own llm example does not type-check against
// Kubernetes' schemas in v0.9.4, and a template field the kind lacks is refused too.
func TestCompileRejectsInvalidGraphs(t *testing.T) {
	_, err := Compile(corpusRGD(t, corpusRejected[0]), spokeSnapshot(t), DefaultConfig())
	var invalid *InvalidGraphError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "ollamaServeDeploymentGPU") {
		t.Fatalf("llm.yaml: %v, want an InvalidGraphError naming the resource", err)
	}

	rgd := readRGD(t, "testdata/chain-rgd.yaml")
	rgd.Spec.Resources[1].Template.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"dta":{"a":"b"}}`)
	_, err = Compile(rgd, spokeSnapshot(t), DefaultConfig())
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `"config"`) {
		t.Fatalf("unknown field: %v, want an InvalidGraphError naming resource config", err)
	}
}

type failingSchemas struct{ err error }

func (f failingSchemas) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	return nil, f.err
}

func TestCompileTellsAnUnreadableClusterFromABadGraph(t *testing.T) {
	target := spokeSnapshot(t)
	target.Schemas = failingSchemas{err: errors.New("connection refused")}
	_, err := Compile(readRGD(t, "testdata/chain-rgd.yaml"), target, DefaultConfig())
	var targetErr *TargetError
	if !errors.As(err, &targetErr) {
		t.Fatalf("%v, want a TargetError", err)
	}
}

func TestCompileLeavesTheRGDAlone(t *testing.T) {
	rgd := corpusRGD(t, "test/upgrade/fixtures/group-default/rgd.yaml")
	if rgd.Spec.Schema.Group != "" {
		t.Fatalf("fixture sets group %q", rgd.Spec.Schema.Group)
	}
	before := rgd.DeepCopy()
	c, err := Compile(rgd, spokeSnapshot(t), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rgd, before) {
		t.Error("Compile modified the RGD")
	}
	if c.InstanceKind().Group != "kro.run" {
		t.Errorf("group %q, want kro's default kro.run", c.InstanceKind().Group)
	}
}
