package chart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
)

// TestValues: each documented value reaches the objects it is for, from --values files and
// --set alike (later ones winning), and nothing optional is rendered unless asked for.
func TestValues(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte("replicas: 5\nimage: {repository: registry.example.com/flotilla}\nadminNamespaces: [ops, platform]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	values, err := Values([]string{file}, []string{"replicas=3", "image.tag=v9", "resources.limits.memory=2Gi",
		"importers.argoCD.enabled=false", "importers.clusterAPI.namespaces={capi}", "importers.kubeconfigSecrets=false",
		"publishClusterProfiles=false", "dashboard.enabled=true", "dashboard.port=9000", "extraArgs={--verify-interval=5m}"})
	if err != nil {
		t.Fatal(err)
	}
	r := render(t, "fleet-ops", values)
	d := &appsv1.Deployment{}
	typed(t, find(t, r, "Deployment", "flotilla-hub"), d)
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 3 || c.Image != "registry.example.com/flotilla:v9" || !c.Resources.Limits.Memory().Equal(resource.MustParse("2Gi")) {
		t.Errorf("replicas %d, image %s, limits %v; want 3, registry.example.com/flotilla:v9, 2Gi", *d.Spec.Replicas, c.Image, c.Resources.Limits)
	}
	for _, want := range []string{"--admin-namespace=ops,platform", "--import-argocd=false", "--cluster-api-namespace=capi",
		"--import-kubeconfig-secrets=false", "--publish-cluster-profiles=false", "--leader-election-namespace=fleet-ops",
		"--kubeconfig-secret-namespace=fleet-ops", "--cluster-profile-namespace=fleet-ops", "--dashboard-bind-address=:9000", "--verify-interval=5m"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("the controller's args lack %s: %v", want, c.Args)
		}
	}
	svc := &corev1.Service{}
	typed(t, find(t, r, "Service", "flotilla-hub"), svc)
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+":"+p.TargetPort.String())
	}
	if !slices.Equal(ports, []string{"metrics:metrics", "dashboard:dashboard"}) {
		t.Errorf("Service ports %v; want metrics and dashboard", ports)
	}
	chrt, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, typo := range []string{"replica=3", "replicas=three", "importers.argocd.enabled=false"} {
		if _, err := Render(chrt, Options{Values: set(t, typo)}); err == nil || !strings.Contains(err.Error(), "values.yaml") {
			t.Errorf("--set %s: %v; want it refused, pointing at values.yaml", typo, err)
		}
	}
	for _, o := range render(t, "", set(t, "kroCRD=false", "replicas=1")).Objects {
		if o.GetKind() == "ServiceMonitor" || o.GetKind() == "PrometheusRule" || o.GetKind() == "PodDisruptionBudget" || o.GetName() == "resourcegraphdefinitions.kro.run" {
			t.Errorf("%s %s rendered without being asked for", o.GetKind(), o.GetName())
		}
	}
}

// TestMonitoring: metrics.serviceMonitor.enabled renders a ServiceMonitor for the Service's
// metrics port, and prometheusRule.enabled a PrometheusRule whose spec is the chart's
// files/alerts.yaml, or an error naming that file where the chart has none.
func TestMonitoring(t *testing.T) {
	r := render(t, "", set(t, "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom",
		"metrics.readers[0].kind=ServiceAccount", "metrics.readers[0].name=prometheus", "metrics.readers[0].namespace=monitoring"))
	sm := find(t, r, "ServiceMonitor", "flotilla-hub")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" || endpoints[0].(map[string]any)["scheme"] != "https" || sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor %v; want one https endpoint on port metrics, label release=prom", sm.Object)
	}
	binding := find(t, r, "ClusterRoleBinding", "flotilla-metrics-reader")
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != "prometheus" {
		t.Errorf("flotilla-metrics-reader is bound to %v, want prometheus", subjects)
	}

	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	alertsFile := "files/alerts.yaml"
	c.Files = slices.DeleteFunc(c.Files, func(f *chart.File) bool { return f.Name == alertsFile })
	if _, err := Render(c, Options{Values: set(t, "prometheusRule.enabled=true")}); err == nil || !strings.Contains(err.Error(), alertsFile) {
		t.Errorf("prometheusRule.enabled without %s: %v; want an error naming the file", alertsFile, err)
	}
	alerts := "groups:\n- name: flotilla\n  rules:\n  - alert: FlotillaTest\n    expr: up == 0\n    for: 5m\n"
	c.Files = append(c.Files, &chart.File{Name: alertsFile, Data: []byte(alerts)})
	r, err = Render(c, Options{Values: set(t, "prometheusRule.enabled=true")})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal([]byte(alerts), &want); err != nil {
		t.Fatal(err)
	}
	spec, _, _ := unstructured.NestedMap(find(t, r, "PrometheusRule", "flotilla-hub").Object, "spec")
	got, _ := yaml.Marshal(spec)
	wantYAML, _ := yaml.Marshal(want)
	if string(got) != string(wantYAML) {
		t.Errorf("PrometheusRule spec:\n%s\nwant files/alerts.yaml:\n%s", got, wantYAML)
	}
}

// TestGrafanaDashboard: by default the chart renders files/dashboard.json, unchanged, in a
// ConfigMap labelled for the Grafana sidecar; grafanaDashboard.* moves, relabels or drops it.
func TestGrafanaDashboard(t *testing.T) {
	dashboard, err := os.ReadFile(filepath.Join("..", "..", "..", "charts", "flotilla", "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	cm := find(t, render(t, "", nil), "ConfigMap", "flotilla-dashboard")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if data["flotilla.json"] != strings.TrimRight(string(dashboard), "\n") || cm.GetLabels()["grafana_dashboard"] != "1" || cm.GetNamespace() != "flotilla-system" {
		t.Errorf("ConfigMap flotilla-dashboard in %s, labels %v: its flotilla.json is not files/dashboard.json", cm.GetNamespace(), cm.GetLabels())
	}
	moved := find(t, render(t, "", set(t, "grafanaDashboard.namespace=monitoring", "grafanaDashboard.labels.grafana_dashboard=flotilla")), "ConfigMap", "flotilla-dashboard")
	if moved.GetNamespace() != "monitoring" || moved.GetLabels()["grafana_dashboard"] != "flotilla" {
		t.Errorf("grafanaDashboard.namespace and labels: %s %v", moved.GetNamespace(), moved.GetLabels())
	}
	for _, o := range render(t, "", set(t, "grafanaDashboard.enabled=false")).Objects {
		if o.GetKind() == "ConfigMap" {
			t.Errorf("grafanaDashboard.enabled=false renders ConfigMap %s", o.GetName())
		}
	}
}

// TestWorkEndpoint: work.enabled serves pull-mode agents over TLS from the Secret
// work.tlsSecret (mounted read-only), as the Service port work; without a Secret the chart
// refuses to render, since the endpoint would serve Secret data as plain HTTP.
func TestWorkEndpoint(t *testing.T) {
	r := render(t, "", set(t, "work.enabled=true", "work.port=9443", "work.tlsSecret=work-tls"))
	d := &appsv1.Deployment{}
	typed(t, find(t, r, "Deployment", "flotilla-hub"), d)
	c := d.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"--work-bind-address=:9443", "--work-cert-file=/etc/flotilla/work-tls/tls.crt", "--work-key-file=/etc/flotilla/work-tls/tls.key"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("the controller's args lack %s: %v", want, c.Args)
		}
	}
	vols := d.Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].Secret == nil || vols[0].Secret.SecretName != "work-tls" ||
		len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != vols[0].Name || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("volumes %+v, mounts %+v; want the Secret work-tls mounted read-only", vols, c.VolumeMounts)
	}
	svc := &corev1.Service{}
	typed(t, find(t, r, "Service", "flotilla-hub"), svc)
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+":"+p.TargetPort.String())
	}
	if !slices.Equal(ports, []string{"metrics:metrics", "work:work"}) {
		t.Errorf("Service ports %v; want metrics and work", ports)
	}
	chrt, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(chrt, Options{Values: set(t, "work.enabled=true")}); err == nil || !strings.Contains(err.Error(), "work.tlsSecret") {
		t.Errorf("work.enabled without work.tlsSecret: %v; want it refused", err)
	}
	d = &appsv1.Deployment{}
	typed(t, find(t, render(t, "", set(t)), "Deployment", "flotilla-hub"), d)
	if c := d.Spec.Template.Spec.Containers[0]; len(d.Spec.Template.Spec.Volumes) != 0 || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--work-") }) {
		t.Errorf("the work endpoint is on by default: %v", c.Args)
	}
}
