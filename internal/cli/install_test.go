package cli

import (
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/install/chart"
)

// TestInstallDryRunPrintsTheChart: `flotilla install --dry-run` prints exactly what Helm's engine
// renders from the chart directory charts/flotilla with its default values, and --set, --values
// and --namespace reach the render. No hub is needed.
func TestInstallDryRunPrintsTheChart(t *testing.T) {
	c, err := chart.LoadFS(os.DirFS("../../charts"), chart.Name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := chart.Render(c, chart.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, nil, "install", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	if out != want.Manifest {
		t.Errorf("flotilla install --dry-run differs from the chart's default render (%d bytes, want %d)", len(out), len(want.Manifest))
	}

	values := t.TempDir() + "/values.yaml"
	if err := os.WriteFile(values, []byte("replicas: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, nil, "install", "--dry-run=client", "-n", "fleet-ops", "-f", values, "--set", "image.tag=v9", "--controller-user", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"replicas: 5", "namespace: fleet-ops", "flotilla:v9", `\"alice\"`} {
		if !strings.Contains(out, w) {
			t.Errorf("install --dry-run with values lacks %q", w)
		}
	}
	_, err = run(t, nil, "install", "--dry-run=maybe")
	wantError(t, err, `--dry-run="maybe"`, "client", "server")
	_, err = run(t, nil, "install", "--set", "replicas")
	wantError(t, err, "--set replicas", "key=value")
}

// TestChartArgsAreHubFlags: every argument the chart gives the controller is a flag `flotilla
// hub` takes, with default values and with the importers and other options changed: a renamed
// flag fails here, not as a crash-looping Deployment.
func TestChartArgsAreHubFlags(t *testing.T) {
	c, err := chart.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, sets := range [][]string{nil, {
		"importers.argoCD.enabled=false", "importers.clusterAPI.enabled=false", "importers.clusterProfiles.enabled=false",
		"importers.kubeconfigSecrets=false", "publishClusterProfiles=false", "adminNamespaces={a,b}", "metrics.port=9443",
		"extraArgs={--verify-interval=5m,--zap-log-level=debug}", "dashboard.enabled=true",
	}} {
		values, err := chart.Values(nil, sets)
		if err != nil {
			t.Fatal(err)
		}
		r, err := chart.Render(c, chart.Options{Values: values})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range r.Objects {
			if o.GetKind() != "Deployment" {
				continue
			}
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
			args := d.Spec.Template.Spec.Containers[0].Args
			if len(args) == 0 || args[0] != "hub" {
				t.Fatalf("the controller runs %v, want flotilla hub", args)
			}
			hub := newHubCommand(&hubFlags{})
			if err := hub.ParseFlags(args[1:]); err != nil {
				t.Errorf("values %v: flotilla hub refuses the chart's args %v: %v", sets, args[1:], err)
			}
		}
	}
}

// TestUninstallRefusesWhileClustersHoldObjects: with a Delivery record on the hub, uninstall
// names the cluster and stops (releasing nothing) unless --orphan.
func TestUninstallRefusesWhileClustersHoldObjects(t *testing.T) {
	record := &flotillav1.Delivery{
		ObjectMeta: metav1.ObjectMeta{Name: "web-eu-1", Namespace: "shop"},
		Spec:       flotillav1.DeliverySpec{Cluster: "eu-1", Owner: flotillav1.DeliveryOwner{Kind: "Propagation", Name: "web"}},
		Status:     flotillav1.DeliveryStatus{Count: 3},
	}
	held := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Finalizers: []string{flotillav1.FinalizerCleanup}}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(record, held).WithStatusSubresource(record).Build()
	out, err := run(t, hub, "uninstall")
	wantError(t, err, "1 clusters hold objects Flotilla delivered", "cluster eu-1: 3 objects of 1 owners", "--orphan")
	if strings.Contains(out, "released") {
		t.Errorf("uninstall released objects while refusing:\n%s", out)
	}
	out, err = run(t, hub, "uninstall", "--orphan")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"leaving delivered objects on 1 clusters", "released Propagation shop/web", "released 1 objects"} {
		if !strings.Contains(out, w) {
			t.Errorf("uninstall --orphan output lacks %q:\n%s", w, out)
		}
	}
}
