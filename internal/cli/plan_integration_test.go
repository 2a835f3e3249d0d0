package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestPlanEveryOwnerKind lets the controller deliver a Propagation with one cluster pinned to
// an older revision, a transparent Deployment divided 2+1 with a Placement override on one
// cluster, and two fleet APIs, one of which cannot compile on one cluster; then `flotilla
// plan` must find every cluster as the controller left it (a plan that ignored the pin, the
// division, the override or the per-cluster compile would show an update), say why the API
// it cannot compile is not delivered there, and show the hold of an object whose Placement
// does not exist.
func TestPlanEveryOwnerKind(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-a"), fleettest.APIOnlySpoke("spoke-b"))
	ctx := context.Background()
	hub := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokes := map[string]client.Client{}
	for name, region := range map[string]string{"spoke-a": "eu", "spoke-b": "us"} {
		cfg := fleet.Plane(name).RESTConfig()
		err := membership.Join(ctx, hub, membership.JoinOptions{Name: name, Spoke: cfg, Labels: map[string]string{"region": region},
			APIGroups: []string{"kro.run", "example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		if spokes[name], err = client.New(cfg, client.Options{Scheme: install.Scheme()}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(c client.Client, objs ...client.Object) {
		t.Helper()
		for _, obj := range objs {
			if err := c.Create(ctx, obj); err != nil {
				t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
			}
		}
	}
	// Only spoke-a serves Gadgets, which the API gadgetset.kro.run makes.
	preserve := true
	create(spokes["spoke-a"], &extv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: extv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: extv1.NamespaceScoped,
			Names: extv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []extv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
					"spec": {Type: "object", XPreserveUnknownFields: &preserve}}}}}}}})

	replicas := int32(3)
	cart := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", Labels: map[string]string{flotillav1.LabelPlacement: "everywhere"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cart"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cart"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cart", Image: "nginx"}}}}}}
	legacy := cart.DeepCopy()
	legacy.Name, legacy.Labels = "legacy", map[string]string{flotillav1.LabelPlacement: "gone"}
	create(hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "everywhere"}, Spec: flotillav1.PlacementSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Overrides: []flotillav1.Override{{Name: "eu-tier", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
				JSONPatch: []flotillav1.JSONPatchOperation{{Op: "add", Path: "/metadata/labels/tier", Value: &extv1.JSON{Raw: []byte(`"eu"`)}}}}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"v": "1"}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: flotillav1.PropagationSpec{
			PlacementRef: flotillav1.PlacementRef{Name: "everywhere"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}},
		cart, legacy)
	create(hub, fleetAPIs(t)...)

	// Revision 1 of web, then 2, with spoke-a pinned to 1.
	web := render.Owner{Kind: "Propagation", Namespace: "shop", Name: "web"}
	first := keptRevisions(t, hub, web, 1)[0]
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}}
	if err := hub.Patch(ctx, settings, client.RawPatch(types.MergePatchType, []byte(`{"data":{"v":"2"}}`))); err != nil {
		t.Fatal(err)
	}
	keptRevisions(t, hub, web, 2)
	pins := fmt.Sprintf(`{"spec":{"revisionPins":[{"cluster":"spoke-a","revision":%q}]}}`, first.Name)
	if err := hub.Patch(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		client.RawPatch(types.MergePatchType, []byte(pins))); err != nil {
		t.Fatal(err)
	}

	// What the controller delivers, before anything is planned.
	delivered := func(what string, check func() error) {
		t.Helper()
		fleettest.Eventually(t, 60*time.Second, what, check)
	}
	for spoke, v := range map[string]string{"spoke-a": "1", "spoke-b": "2"} {
		delivered("settings v="+v+" on "+spoke, func() error {
			cm := &corev1.ConfigMap{}
			if err := spokes[spoke].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "settings"}, cm); err != nil {
				return err
			}
			if cm.Data["v"] != v {
				return fmt.Errorf("v=%s", cm.Data["v"])
			}
			return nil
		})
	}
	shares := map[int32]int{}
	for spoke, tier := range map[string]string{"spoke-a": "eu", "spoke-b": ""} {
		delivered("cart on "+spoke, func() error {
			d := &appsv1.Deployment{}
			if err := spokes[spoke].Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, d); err != nil {
				return err
			}
			if d.Labels["tier"] != tier {
				return fmt.Errorf("tier %q", d.Labels["tier"])
			}
			shares[*d.Spec.Replicas]++
			return nil
		})
	}
	if shares[2] != 1 || shares[1] != 1 {
		t.Fatalf("cart divided %v, want 2+1", shares)
	}
	for _, crd := range []struct{ spoke, name string }{{"spoke-a", "webservices.kro.run"}, {"spoke-b", "webservices.kro.run"}, {"spoke-a", "gadgetsets.kro.run"}} {
		delivered("CRD "+crd.name+" Established on "+crd.spoke, func() error {
			got := &extv1.CustomResourceDefinition{}
			if err := spokes[crd.spoke].Get(ctx, client.ObjectKey{Name: crd.name}, got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("not Established")
		})
	}

	unchanged := func(cluster string) string {
		return "Cluster " + cluster + ": 0 to create, 0 to update, 0 to prune, 0 blocked, 1 unchanged"
	}
	for _, tt := range []struct {
		args           []string
		want, unwanted []string
	}{
		{[]string{"plan", "web", "-n", "shop"},
			[]string{"Cluster spoke-a is pinned to revision " + first.Name, unchanged("spoke-a"), unchanged("spoke-b")}, []string{"/data/v", "held:"}},
		{[]string{"plan", "deployment/cart", "-n", "shop"}, []string{unchanged("spoke-a"), unchanged("spoke-b")}, []string{"/spec/replicas", "tier", "held:"}},
		{[]string{"plan", "deploy/legacy", "-n", "shop"},
			[]string{"held: Placement shop/gone does not exist; create it, or fix the label flotilla.dev/placement", "No cluster gets anything"}, []string{"Cluster "}},
		{[]string{"plan", "apipropagation/platform"}, []string{
			"ResourceGraphDefinition gadgetset.kro.run:\n" + unchanged("spoke-a") + "\n\nCluster spoke-b: cannot plan: CompileFailed (SchemaNotFound)",
			"ResourceGraphDefinition webservice.kro.run:\n" + unchanged("spoke-a") + "\n\n" + unchanged("spoke-b")}, []string{"held:"}},
	} {
		out := runCLI(t, fleet, tt.args...)
		t.Logf("flotilla %s:\n%s", strings.Join(tt.args, " "), out)
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("flotilla %s lacks %q:\n%s", strings.Join(tt.args, " "), want, out)
			}
		}
		for _, unwanted := range tt.unwanted {
			if strings.Contains(out, unwanted) {
				t.Errorf("flotilla %s shows %q:\n%s", strings.Join(tt.args, " "), unwanted, out)
			}
		}
	}
}

// fleetAPIs are examples/fleet-api.yaml's RGD, an RGD of Gadgets, and APIPropagation platform
// serving both on every cluster.
func fleetAPIs(t *testing.T) []client.Object {
	t.Helper()
	data, err := os.ReadFile("../../examples/fleet-api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	webservice, gadgets := &kro.ResourceGraphDefinition{}, &kro.ResourceGraphDefinition{}
	if err := yaml.Unmarshal([]byte(strings.Split(string(data), "\n---")[0]), webservice); err != nil {
		t.Fatal(err)
	}
	err = yaml.Unmarshal([]byte(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: gadgetset.kro.run}
spec:
  schema:
    apiVersion: v1alpha1
    kind: GadgetSet
    spec:
      size: string | default="small"
  resources:
  - id: gadget
    template:
      apiVersion: example.com/v1
      kind: Gadget
      metadata: {name: "${schema.metadata.name}"}
      spec: {size: "${schema.spec.size}"}
`), gadgets)
	if err != nil {
		t.Fatal(err)
	}
	return []client.Object{webservice, gadgets,
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: "fleet"},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{webservice.Name, gadgets.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace}}},
	}
}
