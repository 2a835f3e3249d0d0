package e2e

import (
	"strings"
	"testing"
)

// TestPlanAndDiff: `flotilla diff` shows an edit made on a cluster and who made it; `flotilla
// plan -f` shows what a changed Propagation would create, update (field by field) and prune,
// and changes nothing.
func TestPlanAndDiff(t *testing.T) {
	flotilla, fleet := startJoinedFleet(t)
	hubKC, spoke1 := fleet.Hub().KubeconfigPath(), fleet.Plane("spoke-1").KubeconfigPath()
	mustKubectl(t, hubKC, "apply", "-f", "testdata/plan-demo.yaml")
	eventuallyKubectl(t, hubKC, "Applied 1", "get", "propagation", "cfg", "-n", "plan-demo", "-o",
		`jsonpath={.status.conditions[?(@.type=="Applied")].reason} {.status.appliedClusters}`)

	if out := runFlotilla(t, flotilla, hubKC, "diff", "cfg", "-n", "plan-demo"); !strings.Contains(out, "Cluster spoke-1: 0 differ, 3 as desired") {
		t.Fatalf("flotilla diff before any edit:\n%s", out)
	}
	mustKubectl(t, spoke1, "patch", "configmap", "a", "-n", "plan-demo", "--type", "merge", "-p", `{"data":{"v":"edited"}}`)
	out := runFlotilla(t, flotilla, hubKC, "diff", "cfg", "-n", "plan-demo")
	for _, want := range []string{"Cluster spoke-1: 1 differ, 2 as desired", "~ configmap plan-demo/a (changed by kubectl-patch (Update))", `/data/v: "edited" → "hub"`} {
		if !strings.Contains(out, want) {
			t.Errorf("flotilla diff lacks %q:\n%s", want, out)
		}
	}

	out = runFlotilla(t, flotilla, hubKC, "plan", "-f", "testdata/plan-change.yaml")
	for _, want := range []string{
		"Cluster spoke-1: 0 to create, 1 to update, 1 to prune, 0 blocked, 1 unchanged",
		"~ configmap plan-demo/b", `/data/v: "hub" → "planned"`,
		"= configmap plan-demo/a: changed on the cluster at /data/v; left as is (drift Report) (changed by kubectl-patch (Update))",
		"- configmap plan-demo/c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("flotilla plan lacks %q:\n%s", want, out)
		}
	}
	// Planning changed nothing.
	if v := mustKubectl(t, spoke1, "get", "configmap", "b", "-n", "plan-demo", "-o", "jsonpath={.data.v}"); v != "hub" {
		t.Fatalf("plan changed b on the cluster: %q", v)
	}
	if v := mustKubectl(t, hubKC, "get", "propagation", "cfg", "-n", "plan-demo", "-o", "jsonpath={.spec.overrides}"); v != "" {
		t.Fatalf("plan changed the Propagation on the hub: %q", v)
	}
}
