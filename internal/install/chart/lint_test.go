package chart

import (
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestHelmLint runs `helm lint` (Helm's linter, from its Go module) on the chart with its
// default values and with every optional part on: no warning, no error.
func TestHelmLint(t *testing.T) {
	kube := &chartutil.KubeVersion{Version: KubeVersion, Major: "1", Minor: "30"}
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"everything on": set(t, "metrics.serviceMonitor.enabled=true", "dashboard.enabled=true",
			"metrics.readers[0].kind=ServiceAccount", "metrics.readers[0].name=prometheus", "metrics.readers[0].namespace=monitoring",
			"deliveryWriters={alice}", "kroCRD=false", "extraArgs={--verify-interval=5m}", "nodeSelector.disk=ssd"),
	} {
		linter := lint.AllWithKubeVersion(chartDir, values, DefaultNamespace, kube)
		t.Logf("helm lint, %s: %d messages: %v", name, len(linter.Messages), linter.Messages)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint, %s: %s", name, m)
			}
		}
	}
}
