package install_test

import (
	"testing"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// TestClustersShowCordonAndTaints: a cordoned or drained cluster must be visible in
// `kubectl get clusters -o wide`.
func TestClustersShowCordonAndTaints(t *testing.T) {
	crds, err := install.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Cordoned": ".spec.unschedulable", "Taints": ".spec.taints[*].key"}
	for _, crd := range crds {
		if crd.Name != "clusters.flotilla.dev" {
			continue
		}
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			if path, ok := want[col.Name]; ok && col.JSONPath == path && col.Priority == 1 {
				delete(want, col.Name)
			}
		}
		if len(want) > 0 {
			t.Errorf("clusters.flotilla.dev lacks the -o wide columns %v", want)
		}
		return
	}
	t.Fatal("no clusters.flotilla.dev CRD")
}
