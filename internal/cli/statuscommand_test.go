package cli

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// statusHub is a fake hub with the Propagation web in web-demo (and, with more, in more
// namespaces) and the APIPropagations of apiPropagations.
func statusHub(funcs interceptor.Funcs, namespaces ...string) client.WithWatch {
	serving, other := apiPropagations()
	objs := []client.Object{serving, other}
	for _, ns := range append([]string{"web-demo"}, namespaces...) {
		objs = append(objs, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Status: flotillav1.PropagationStatus{SelectedObjects: 2, TargetClusters: 1,
				ClusterResults: []flotillav1.ClusterResult{{Cluster: "spoke-1", Revision: "r1", Applied: 2, Ready: 2}}}})
	}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func TestStatusOutput(t *testing.T) {
	hub := statusHub(interceptor.Funcs{})
	out, err := run(t, hub, "status", "web", "-n", "web-demo", "-o", "yaml")
	if err != nil || !strings.Contains(out, "kind: Propagation\n") || !strings.Contains(out, "namespace: web-demo") ||
		!strings.Contains(out, "cluster: spoke-1") || strings.Contains(out, "kind: List") {
		t.Errorf("status web -o yaml: error %v; want the Propagation, got:\n%s", err, out)
	}
	out, err = run(t, hub, "status", "fapi/a-public", "-o", "json")
	if err != nil || !strings.Contains(out, `"kind": "APIPropagation"`) || !strings.Contains(out, `"servingClusters": 1`) {
		t.Errorf("status fapi/a-public -o json: error %v, output:\n%s", err, out)
	}
	out, err = run(t, hub, "status", "rgd/webservice.kro.run", "-o", "jsonpath={.metadata.name}")
	if err != nil || out != "a-public" {
		t.Errorf("status rgd/webservice.kro.run -o jsonpath: error %v; want the APIPropagation serving it, got %q", err, out)
	}
	_, err = run(t, hub, "status", "web", "-o", "wide")
	wantUsage(t, err, `--output "wide": want json, yaml, name or jsonpath=TEMPLATE`)
	_, err = run(t, hub, "status", "deployment/web")
	wantUsage(t, err, `"deployment/web": want propagation/NAME`)
}

func TestStatusAllNamespaces(t *testing.T) {
	hub := statusHub(interceptor.Funcs{}, "shop")
	out, err := run(t, hub, "status", "web", "-A")
	if err != nil || !strings.Contains(out, "Propagation shop/web: 2 objects") || !strings.Contains(out, "Propagation web-demo/web: 2 objects") {
		t.Errorf("status web -A: error %v; want both, got:\n%s", err, out)
	}
	out, err = run(t, hub, "status", "web", "-A", "-o", "name")
	if err != nil || out != "propagation.flotilla.dev/web\npropagation.flotilla.dev/web\n" {
		t.Errorf("status web -A -o name: error %v, output %q", err, out)
	}
	out, err = run(t, hub, "status", "web", "-A", "-o", "yaml")
	if err != nil || !strings.Contains(out, "kind: List") || strings.Count(out, "kind: Propagation") != 2 {
		t.Errorf("status web -A -o yaml: error %v; want a List of both, got:\n%s", err, out)
	}
	out, err = run(t, hub, "status", "fapi/a-public", "-A")
	if err != nil || !strings.Contains(out, "APIPropagation a-public") {
		t.Errorf("status fapi/a-public -A (cluster-scoped: -A is ignored): error %v, output:\n%s", err, out)
	}
	_, err = run(t, hub, "status", "placement/web", "-A")
	wantError(t, err, "no placement named web in any namespace")
}

func TestStatusNotFoundSaysWhereToLook(t *testing.T) {
	forbidden := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "flotilla.dev", Resource: "propagations"}, "", nil)
	}}
	for _, tt := range []struct {
		hub  client.WithWatch
		args []string
		want string
	}{
		{statusHub(interceptor.Funcs{}), []string{"status", "web"},
			"propagation web not found in namespace default; it is in namespace web-demo: pass -n web-demo"},
		{statusHub(interceptor.Funcs{}, "shop"), []string{"status", "web", "-n", "team"},
			"propagation web not found in namespace team; there is one in namespaces shop, web-demo: pass -n NAMESPACE, or -A for all"},
		{statusHub(interceptor.Funcs{}), []string{"status", "placement/web"},
			"placement web not found in namespace default, nor in any other namespace (list them with: kubectl get placements -A)"},
		{statusHub(forbidden), []string{"status", "web"}, "propagation web not found in namespace default; pass -n NAMESPACE"},
		{statusHub(forbidden), []string{"status", "web", "-n", "default"}, "propagation web not found in namespace default"},
		{statusHub(interceptor.Funcs{}), []string{"plan", "web"},
			"propagation web not found in namespace default; it is in namespace web-demo: pass -n web-demo"},
	} {
		_, err := run(t, tt.hub, tt.args...)
		if err == nil || err.Error() != tt.want || !apierrors.IsNotFound(err) {
			t.Errorf("%s: error %v; want a NotFound error saying %q", tt.args, err, tt.want)
		}
	}
}
