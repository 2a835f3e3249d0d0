package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// TestHelmTemplate renders the chart with its default values, as `helm template` does: it makes
// the whole hub (with the Grafana dashboard's ConfigMap), every object decodes into its Go type
// without an unknown field, and the optional parts (ServiceMonitor, PrometheusRule, the
// dashboard port) are off.
func TestHelmTemplate(t *testing.T) {
	r := render(t, "", nil)
	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		var into any
		switch o.GetKind() {
		case "Namespace":
			into = &corev1.Namespace{}
		case "ServiceAccount":
			into = &corev1.ServiceAccount{}
		case "Service":
			into = &corev1.Service{}
		case "ConfigMap":
			into = &corev1.ConfigMap{}
		case "Deployment":
			into = &appsv1.Deployment{}
		case "PodDisruptionBudget":
			into = &policyv1.PodDisruptionBudget{}
		case "ClusterRole", "Role":
			into = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding", "RoleBinding":
			into = &rbacv1.ClusterRoleBinding{}
		case "CustomResourceDefinition":
			into = &apiextensionsv1.CustomResourceDefinition{}
		case "ValidatingAdmissionPolicy":
			into = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		case "ValidatingAdmissionPolicyBinding":
			into = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		default:
			t.Errorf("the default render has an unexpected %s", o.GetKind())
			continue
		}
		typed(t, o, into)
	}
	crds, err := install.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		got := &apiextensionsv1.CustomResourceDefinition{}
		typed(t, find(t, r, "CustomResourceDefinition", crd.Name), got)
		if !equality.Semantic.DeepEqual(got.Spec, crd.Spec) || got.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s differs from config/crd/bases, or helm uninstall would delete it", crd.Name)
		}
	}
	kro := find(t, r, "CustomResourceDefinition", "resourcegraphdefinitions.kro.run")
	if kro.GetAnnotations()[install.AnnotationInstalledBy] != install.FieldManager {
		t.Errorf("kro's CRD is not marked as installed by Flotilla: flotilla install would not know it may update it")
	}
	for _, want := range []string{
		"Namespace /flotilla-system", "ServiceAccount flotilla-system/flotilla-hub", "ClusterRole /flotilla-hub",
		"ClusterRoleBinding /flotilla-hub", "Role flotilla-system/flotilla-hub", "RoleBinding flotilla-system/flotilla-hub",
		"ClusterRole /flotilla-metrics-reader", "Deployment flotilla-system/flotilla-hub", "Service flotilla-system/flotilla-hub",
		"PodDisruptionBudget flotilla-system/flotilla-hub", "ConfigMap flotilla-system/flotilla-dashboard",
		"ValidatingAdmissionPolicy /flotilla-deliveries", "ValidatingAdmissionPolicyBinding /flotilla-deliveries",
	} {
		if !slices.Contains(kinds, want) {
			t.Errorf("the default render lacks %s; it has %v", want, kinds)
		}
	}
	if kinds[0] != "Namespace /flotilla-system" {
		t.Errorf("the namespace is not applied first: %v", kinds)
	}
	d := &appsv1.Deployment{}
	typed(t, find(t, r, "Deployment", "flotilla-hub"), d)
	args := d.Spec.Template.Spec.Containers[0].Args
	if *d.Spec.Replicas != 2 || !slices.Contains(args, "--leader-elect=true") || !slices.Contains(args, "--leader-election-namespace=flotilla-system") {
		t.Errorf("the controller does not run 2 replicas with leader election in flotilla-system: %d replicas, args %v", *d.Spec.Replicas, args)
	}
}

// TestKustomizeBaseIsTheChart: config/default is the chart's render with default values, and the
// chart's copies of the generated CRDs and roles are the generated files (`make generate`).
func TestKustomizeBaseIsTheChart(t *testing.T) {
	r := render(t, "", nil)
	base, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "default", "flotilla.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(base) != GeneratedHeader+r.Manifest {
		t.Error("config/default/flotilla.yaml is not the chart's render with default values: run `make generate`")
	}
	config := filepath.Join("..", "..", "..", "config")
	for copy, source := range map[string]string{
		"files/crds/*.yaml": "crd/bases",
		"files/kro/*.yaml":  "crd/kro",
		"files/rbac/*.yaml": "rbac",
	} {
		files, _ := filepath.Glob(filepath.Join(chartDir, copy))
		sources, _ := filepath.Glob(filepath.Join(config, source, "*.yaml"))
		if len(files) == 0 || len(files) != len(sources) {
			t.Errorf("the chart has %d files %s, config/%s has %d: run `make generate`", len(files), copy, source, len(sources))
		}
		for _, f := range files {
			got, _ := os.ReadFile(f)
			want, err := os.ReadFile(filepath.Join(config, source, filepath.Base(f)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is not a copy of config/%s/%s: run `make generate`", f, source, filepath.Base(f))
			}
		}
	}
}
