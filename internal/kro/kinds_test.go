package kro

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestCRDNameMatchesTheCompiledCRD checks the name known without compiling against kro's own
// generated CRD, for every RGD of the corpus.
func TestCRDNameMatchesTheCompiledCRD(t *testing.T) {
	target := spokeSnapshot(t)
	for _, rel := range corpus() {
		rgd := corpusRGD(t, rel)
		compiled, err := Compile(rgd, target, DefaultConfig())
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if got, want := CRDName(rgd), compiled.CRD().Name; got != want {
			t.Errorf("%s: CRDName %q, compiled CRD %q", rel, got, want)
		}
		if got, want := InstanceKind(rgd), compiled.InstanceKind(); got != want {
			t.Errorf("%s: InstanceKind %v, compiled %v", rel, got, want)
		}
	}
}

func TestReferencedKinds(t *testing.T) {
	got := ReferencedKinds(corpusRGD(t, "examples/kubernetes/webapp/rg.yaml"))
	want := []schema.GroupVersionKind{
		{Group: "", Version: "v1", Kind: "Service"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
