package fleetapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

const wait = 60 * time.Second

func TestMain(m *testing.M) {
	fleettest.SetControllerLogger()
	os.Exit(fleettest.Main(m))
}

// env is a hub running the controller and three API-only spokes with audit logs; spokes join
// when a test says so.
type env struct {
	t          *testing.T // the test the controller lives as long as
	fleet      *localfleet.Fleet
	hub        client.Client
	spokes     map[string]client.Client
	controller *hubtest.Controller
}

func startEnv(t *testing.T, spokes ...string) *env {
	t.Helper()
	specs := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub, AuditLog: true}}
	for _, name := range spokes {
		s := fleettest.APIOnlySpoke(name)
		s.AuditLog = true
		specs = append(specs, s)
	}
	fleet := fleettest.Start(t, specs...)
	e := &env{t: t, fleet: fleet, hub: hubtest.Install(t, fleet), spokes: map[string]client.Client{}}
	e.controller = hubtest.Run(t, fleet)
	for _, name := range spokes {
		c, err := client.New(fleet.Plane(name).RESTConfig(), client.Options{Scheme: install.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		e.spokes[name] = c
	}
	return e
}

func (e *env) join(t *testing.T, name string) {
	t.Helper()
	err := membership.Join(context.Background(), e.hub, membership.JoinOptions{Name: name, Spoke: e.fleet.Plane(name).RESTConfig(),
		APIGroups: []string{"kro.run", "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
}

// kroFile reads a file of the pinned kro module (its examples and test fixtures).
func kroFile(t *testing.T, rel string, into any) {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", kro.ModulePath).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", kro.ModulePath, err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// installAllowUnknown installs, on a spoke, the CRD kro's check-unknown-fields RGD needs.
func (e *env) installAllowUnknown(t *testing.T, spoke string) {
	t.Helper()
	crd := &extv1.CustomResourceDefinition{}
	kroFile(t, "test/e2e/chainsaw/check-unknown-fields/allow-unknown-crd.yaml", crd)
	if err := e.spokes[spoke].Create(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
}

// served waits until a spoke has the CRD Established, compiled from that RGD generation, with
// kro's labels.
func (e *env) served(t *testing.T, spoke, crdName string, rgd *kro.ResourceGraphDefinition, generation int64) {
	t.Helper()
	fleettest.Eventually(t, wait, fmt.Sprintf("CRD %s of generation %d Established on %s", crdName, generation, spoke), func() error {
		crd := &extv1.CustomResourceDefinition{}
		if err := e.spokes[spoke].Get(context.Background(), client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		if got := crd.Annotations[flotillav1.AnnotationRGDGeneration]; got != fmt.Sprint(generation) {
			return fmt.Errorf("generation %q", got)
		}
		want := map[string]string{kro.OwnedLabel: "true", kro.VersionLabel: kro.Version, kro.RGDNameLabel: rgd.Name, kro.RGDIDLabel: string(rgd.UID)}
		for k, v := range want {
			if crd.Labels[k] != v {
				return fmt.Errorf("label %s=%q, want %q", k, crd.Labels[k], v)
			}
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Established: %+v", crd.Status.Conditions)
	})
}

// instanceExpanded creates an instance of rgd's kind on a spoke (spec, with its name), waits for the hub to expand it
// (its Deployment there), deletes it and waits until it is gone.
func (e *env) instanceExpanded(t *testing.T, spoke string, rgd *kro.ResourceGraphDefinition, name string, spec map[string]any) {
	t.Helper()
	ctx := context.Background()
	c := e.spokes[spoke]
	instance := &unstructured.Unstructured{}
	instance.SetGroupVersionKind(kro.InstanceKind(rgd))
	instance.SetNamespace("default")
	instance.SetName(name)
	if spec == nil {
		spec = map[string]any{}
	}
	spec["name"] = name
	instance.Object["spec"] = spec
	if err := c.Create(ctx, instance); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, fmt.Sprintf("the Deployment of instance %s on %s", name, spoke), func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &appsv1.Deployment{})
	})
	if err := c.Delete(ctx, instance); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, fmt.Sprintf("instance %s gone from %s", name, spoke), func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(instance), instance.DeepCopy())
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// kroCRD installs on a spoke the CRD a kro running there would have generated from the RGD in
// a manifest (kro's labels, the spoke's own RGD uid, no Flotilla marker), and waits until it is
// Established.
func (e *env) kroCRD(t *testing.T, spoke, manifest string) *extv1.CustomResourceDefinition {
	t.Helper()
	rgd := &kro.ResourceGraphDefinition{}
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if strings.Contains(doc, "kind: ResourceGraphDefinition") {
			if err := yaml.Unmarshal([]byte(doc), rgd); err != nil {
				t.Fatal(err)
			}
		}
	}
	rgd.UID = "uid-of-the-rgd-on-" + types.UID(spoke)
	target, err := kro.TargetForConfig(e.fleet.Plane(spoke).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := kro.Compile(rgd, target, kro.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	crd := compiled.CRD()
	e.createEstablished(t, spoke, crd)
	return crd
}

// addField adds a field to an RGD's SimpleSchema spec.
func addField(t *testing.T, name, simpleSchema string) func(*kro.ResourceGraphDefinition) {
	return func(rgd *kro.ResourceGraphDefinition) {
		var spec map[string]any
		if err := yaml.Unmarshal(rgd.Spec.Schema.Spec.Raw, &spec); err != nil {
			t.Fatal(err)
		}
		spec[name] = simpleSchema
		raw, err := yaml.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if rgd.Spec.Schema.Spec.Raw, err = yaml.YAMLToJSON(raw); err != nil {
			t.Fatal(err)
		}
	}
}

// addResource adds a resource to an RGD's graph.
func addResource(t *testing.T, resource map[string]any) func(*kro.ResourceGraphDefinition) {
	return func(rgd *kro.ResourceGraphDefinition) {
		raw, err := json.Marshal(rgd.Spec)
		if err != nil {
			t.Fatal(err)
		}
		var spec map[string]any
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		spec["resources"] = append(spec["resources"].([]any), resource)
		if raw, err = json.Marshal(spec); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &rgd.Spec); err != nil {
			t.Fatal(err)
		}
	}
}

// installGadgets installs, on a spoke, a namespaced kind (Gadget.example.com) that only some
// spokes serve, and waits until it is Established.
func (e *env) installGadgets(t *testing.T, spoke string) {
	t.Helper()
	preserve := true
	crd := &extv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: extv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: extv1.NamespaceScoped,
			Names: extv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []extv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
					"spec": {Type: "object", XPreserveUnknownFields: &preserve}}}}}}}}
	e.createEstablished(t, spoke, crd)
}

// createEstablished creates a CRD on a spoke and waits until it is Established.
func (e *env) createEstablished(t *testing.T, spoke string, crd *extv1.CustomResourceDefinition) {
	t.Helper()
	if err := e.spokes[spoke].Create(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "CRD "+crd.Name+" Established on "+spoke, func() error {
		if err := e.spokes[spoke].Get(context.Background(), client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Established")
	})
}

// pin sets the revision APIPropagation platform pins an RGD's cluster to ("" follows the RGD),
// as a person would: on the APIPropagation, not on the controller's Delivery record.
func (e *env) pin(t *testing.T, rgd, cluster, revision string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &flotillav1.APIPropagation{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: "platform"}, p); err != nil {
			return err
		}
		pins := slices.DeleteFunc(p.Spec.RevisionPins, func(pin flotillav1.APIRevisionPin) bool {
			return pin.ResourceGraphDefinition == rgd && pin.Cluster == cluster
		})
		if revision != "" {
			pins = append(pins, flotillav1.APIRevisionPin{ResourceGraphDefinition: rgd, Cluster: cluster, Revision: revision})
		}
		p.Spec.RevisionPins = pins
		return e.hub.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// revisionsKept checks that the hub keeps n revisions of an RGD and that every spoke's CRD
// names one of them.
func (e *env) revisionsKept(t *testing.T, rgd, crdName string, n int) {
	t.Helper()
	ctx := context.Background()
	list := &appsv1.ControllerRevisionList{}
	if err := e.hub.List(ctx, list, client.InNamespace(membership.Namespace)); err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, cr := range list.Items {
		if strings.Contains(cr.Annotations[flotillav1.AnnotationOwner], rgd) {
			kept[cr.Name] = true
		}
	}
	if len(kept) != n {
		t.Errorf("%d revisions of %s kept, want %d: %v", len(kept), rgd, n, kept)
	}
	for name, c := range e.spokes {
		crd := &extv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			continue
		}
		if rev := crd.Annotations[flotillav1.AnnotationAPIRevision]; !kept[rev] {
			t.Errorf("the CRD on %s names revision %q, which is not kept", name, rev)
		}
	}
}

func (e *env) absent(t *testing.T, spoke, crdName string) {
	t.Helper()
	err := e.spokes[spoke].Get(context.Background(), client.ObjectKey{Name: crdName}, &extv1.CustomResourceDefinition{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("CRD %s on %s: %v, want none", crdName, spoke, err)
	}
}

// status waits until the APIPropagation's status passes check, at its current generation.
func (e *env) status(t *testing.T, name, what string, check func(*flotillav1.APIPropagation) error) *flotillav1.APIPropagation {
	t.Helper()
	p := &flotillav1.APIPropagation{}
	fleettest.Eventually(t, wait, "APIPropagation "+name+": "+what, func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, p); err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("observed generation %d of %d", p.Status.ObservedGeneration, p.Generation)
		}
		if err := check(p); err != nil {
			return fmt.Errorf("%w; status %+v", err, p.Status)
		}
		return nil
	})
	return p
}

func serving(clusters int32) func(*flotillav1.APIPropagation) error {
	return func(p *flotillav1.APIPropagation) error {
		c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.APIPropagationServing)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Serving %+v", c)
		}
		if p.Status.ServingClusters != clusters || p.Status.TargetClusters != clusters {
			return fmt.Errorf("serving %d of %d clusters, want %d", p.Status.ServingClusters, p.Status.TargetClusters, clusters)
		}
		return nil
	}
}

func apiOf(p *flotillav1.APIPropagation, name string) *flotillav1.APIResult {
	for i := range p.Status.APIs {
		if a := &p.Status.APIs[i]; a.Name == name {
			return a
		}
	}
	return nil
}

func resultOf(p *flotillav1.APIPropagation, cluster, api string) *flotillav1.APIClusterResult {
	for i := range p.Status.ClusterResults {
		if r := &p.Status.ClusterResults[i]; r.Cluster == cluster && r.API == api {
			return r
		}
	}
	return nil
}

// flotillaWrites counts the mutating requests Flotilla made to a plane since a time that match.
func (e *env) flotillaWrites(t *testing.T, plane string, since time.Time, match func(localfleet.AuditEvent) bool) []string {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && !ev.StageTimestamp.Before(since) && match(ev) {
			writes = append(writes, ev.Verb+" "+ev.RequestURI)
		}
	}
	return writes
}

// quiet checks that over a few seconds Flotilla writes nothing to the spokes, and nothing of
// fleet APIs to the hub (the APIPropagation's status, Delivery records, RGDs).
func (e *env) quiet(t *testing.T, since time.Time) {
	t.Helper()
	fleettest.Consistently(t, 6*time.Second, "no writes in steady state", func() error {
		for spoke := range e.spokes {
			if w := e.flotillaWrites(t, spoke, since, func(localfleet.AuditEvent) bool { return true }); len(w) > 0 {
				return fmt.Errorf("writes to %s: %s", spoke, strings.Join(w, "; "))
			}
		}
		fleetAPIs := func(ev localfleet.AuditEvent) bool {
			return slices.Contains([]string{"apipropagations", "deliveries", "resourcegraphdefinitions"}, ev.ObjectRef.Resource)
		}
		if w := e.flotillaWrites(t, "hub", since, fleetAPIs); len(w) > 0 {
			return fmt.Errorf("writes to the hub: %s", strings.Join(w, "; "))
		}
		return nil
	})
}

// lastSchemaRead is when Flotilla last read a plane's /openapi/v3 root.
func (e *env) lastSchemaRead(t *testing.T, plane string) time.Time {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, ev := range events {
		root := ev.RequestURI == "/openapi/v3" || strings.HasPrefix(ev.RequestURI, "/openapi/v3?")
		if root && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.StageTimestamp.After(last) {
			last = ev.StageTimestamp
		}
	}
	return last
}

// compiles is how many RGD compiles the controller has run (flotilla_api_compiles_total).
func compiles(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() == "flotilla_api_compiles_total" {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	if total == 0 {
		t.Fatal("no compile is counted")
	}
	return total
}

func (e *env) updateRGD(t *testing.T, name string, mutate func(*kro.ResourceGraphDefinition)) *kro.ResourceGraphDefinition {
	t.Helper()
	rgd := &kro.ResourceGraphDefinition{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		*rgd = kro.ResourceGraphDefinition{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, rgd); err != nil {
			return err
		}
		mutate(rgd)
		return e.hub.Update(context.Background(), rgd)
	})
	if err != nil {
		t.Fatal(err)
	}
	return rgd
}

// TestServeRGDsOnSpokes serves kro's webapp example and its check-unknown-fields fixture on
// three spokes: one that joins after the RGDs are placed, and one that lacks a CRD the second
// RGD needs until it is installed there.
func TestServeRGDsOnSpokes(t *testing.T) {
	e := startEnv(t, "spoke-a", "spoke-b", "spoke-c")
	ctx := context.Background()
	e.join(t, "spoke-a")
	e.join(t, "spoke-b")
	e.installAllowUnknown(t, "spoke-a")
	e.installAllowUnknown(t, "spoke-b")

	webapp, unknown := &kro.ResourceGraphDefinition{}, &kro.ResourceGraphDefinition{}
	kroFile(t, "examples/kubernetes/webapp/rg.yaml", webapp)
	kroFile(t, "test/e2e/chainsaw/check-unknown-fields/rgd.yaml", unknown)
	for _, obj := range []client.Object{
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: membership.Namespace},
			Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		webapp, unknown,
		&flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{webapp.Name, unknown.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
		}},
	} {
		if err := e.hub.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
	webappCRD, unknownCRD := kro.CRDName(webapp), kro.CRDName(unknown)

	t.Run("the CRDs are Established on every chosen spoke with kro's labels", func(t *testing.T) {
		for _, s := range []string{"spoke-a", "spoke-b"} {
			e.served(t, s, webappCRD, webapp, 1)
			e.served(t, s, unknownCRD, unknown, 1)
		}
		p := e.status(t, "platform", "serving on 2 clusters", serving(2))
		if p.Status.APICount != 2 {
			t.Errorf("apiCount %d", p.Status.APICount)
		}
		// The audit filter the steady-state checks rely on sees Flotilla's writes.
		created := e.flotillaWrites(t, "spoke-a", time.Time{}, func(ev localfleet.AuditEvent) bool {
			return ev.Verb != "delete" && ev.ObjectRef.Resource == "customresourcedefinitions" && ev.ObjectRef.Name == webappCRD
		})
		if len(created) == 0 {
			t.Error("no write of the webapp CRD to spoke-a is audited")
		}
	})

	t.Run("a spoke that joins later gets the CRD; one it cannot compile there fails there only", func(t *testing.T) {
		e.join(t, "spoke-c")
		e.served(t, "spoke-c", webappCRD, webapp, 1)
		p := e.status(t, "platform", "check-unknown-fields fails on spoke-c", func(p *flotillav1.APIPropagation) error {
			if r := resultOf(p, "spoke-c", webapp.Name); r == nil || r.Phase != flotillav1.APIServing || r.ServedGeneration != 1 {
				return fmt.Errorf("webapp on spoke-c: %+v", r)
			}
			r := resultOf(p, "spoke-c", unknown.Name)
			if r == nil || r.Phase != flotillav1.APICompileFailed || r.Reason != flotillav1.ReasonSchemaNotFound {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			if !strings.Contains(r.Message, "AllowUnknown") || !strings.Contains(r.Message, `"example"`) {
				return fmt.Errorf("the message does not name the kind and the resource: %s", r.Message)
			}
			if p.Status.TargetClusters != 3 || p.Status.ServingClusters != 2 || p.Status.FailedClusters != 1 {
				return fmt.Errorf("counts %d/%d/%d", p.Status.TargetClusters, p.Status.ServingClusters, p.Status.FailedClusters)
			}
			if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.APIPropagationServing); c == nil || c.Reason != flotillav1.ReasonCompileFailed {
				return fmt.Errorf("Serving %+v", c)
			}
			return nil
		})
		e.absent(t, "spoke-c", unknownCRD)
		for _, s := range []string{"spoke-a", "spoke-b"} {
			if r := resultOf(p, s, unknown.Name); r == nil || r.Phase != flotillav1.APIServing {
				t.Errorf("check-unknown-fields on %s: %+v", s, r)
			}
		}
	})

	t.Run("installing the missing CRD on the spoke serves the API there, with no change on the hub", func(t *testing.T) {
		before := &flotillav1.APIPropagation{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: "platform"}, before); err != nil {
			t.Fatal(err)
		}
		e.installAllowUnknown(t, "spoke-c")
		e.served(t, "spoke-c", unknownCRD, unknown, 1)
		p := e.status(t, "platform", "serving on 3 clusters", serving(3))
		if p.Generation != before.Generation {
			t.Errorf("the APIPropagation changed: generation %d, was %d", p.Generation, before.Generation)
		}
	})

	t.Run("an instance on the spoke that joined last is expanded there; the hub counts the instances on each spoke by state", func(t *testing.T) {
		spoke := e.spokes["spoke-c"]
		shop := &unstructured.Unstructured{}
		shop.SetGroupVersionKind(kro.InstanceKind(webapp))
		shop.SetNamespace("default")
		shop.SetName("shop")
		shop.Object["spec"] = map[string]any{"name": "shop"}
		if err := spoke.Create(ctx, shop); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the Deployment of the instance", func() error {
			return spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "shop"}, &appsv1.Deployment{})
		})
		e.status(t, "platform", "one instance not ready on spoke-c, named", func(p *flotillav1.APIPropagation) error {
			r := resultOf(p, "spoke-c", webapp.Name)
			if r == nil || r.Instances == nil || r.Instances.Total != 1 || r.Instances.Active != 0 {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			api := apiOf(p, webapp.Name)
			if api == nil || len(api.NotReady) != 1 || api.NotReady[0].Cluster != "spoke-c" || api.NotReady[0].Instance != "default/shop" {
				return fmt.Errorf("apis[webapp]: %+v", api)
			}
			return nil
		})
		fleettest.MarkAvailable(t, spoke, client.ObjectKey{Namespace: "default", Name: "shop"})
		e.status(t, "platform", "the instance ACTIVE on spoke-c", func(p *flotillav1.APIPropagation) error {
			want := flotillav1.InstanceCounts{Total: 1, Active: 1}
			if r := resultOf(p, "spoke-c", webapp.Name); r == nil || r.Instances == nil || *r.Instances != want {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			if r := resultOf(p, "spoke-b", webapp.Name); r == nil || r.Instances == nil || *r.Instances != (flotillav1.InstanceCounts{}) {
				return fmt.Errorf("spoke-b: %+v", r)
			}
			if api := apiOf(p, webapp.Name); api == nil || api.Instances == nil || *api.Instances != want || len(api.NotReady) != 0 {
				return fmt.Errorf("apis[webapp]: %+v", api)
			}
			if p.Status.Instances == nil || *p.Status.Instances != want {
				return fmt.Errorf("status.instances %+v", p.Status.Instances)
			}
			return nil
		})
		if err := spoke.Delete(ctx, shop); err != nil {
			t.Fatal(err)
		}
		e.status(t, "platform", "no instance left", func(p *flotillav1.APIPropagation) error {
			if p.Status.Instances == nil || p.Status.Instances.Total != 0 {
				return fmt.Errorf("status.instances %+v", p.Status.Instances)
			}
			return nil
		})
	})

	t.Run("steady state writes nothing and compiles nothing", func(t *testing.T) {
		// A pass over each RGD (an annotation kro does not read) reads each spoke's schemas
		// again, once the view read last is older than the few seconds passes share it for,
		// and finds nothing to compile or write.
		for spoke := range e.spokes {
			fleettest.Eventually(t, wait, "the schemas read last from "+spoke+" expire", func() error {
				if last := e.lastSchemaRead(t, spoke); time.Since(last) < 6*time.Second {
					return fmt.Errorf("read at %s", last)
				}
				return nil
			})
		}
		before, since := compiles(t), time.Now()
		for _, name := range []string{webapp.Name, unknown.Name} {
			e.updateRGD(t, name, func(rgd *kro.ResourceGraphDefinition) {
				if rgd.Annotations == nil {
					rgd.Annotations = map[string]string{}
				}
				rgd.Annotations["example.com/touched"] = "yes"
			})
		}
		for spoke := range e.spokes {
			fleettest.Eventually(t, wait, "a pass reads the schemas of "+spoke, func() error {
				if last := e.lastSchemaRead(t, spoke); !last.After(since) {
					return fmt.Errorf("no read of /openapi/v3 by Flotilla since %s", since)
				}
				return nil
			})
		}
		e.quiet(t, since)
		if after := compiles(t); after != before {
			t.Errorf("%v compiles in steady state", after-before)
		}
	})

	t.Run("a restart writes nothing", func(t *testing.T) {
		e.controller.Stop()
		restarted := time.Now()
		e.controller = hubtest.Run(e.t, e.fleet)
		e.quiet(t, restarted)
		e.quiet(t, restarted) // the first passes after the restart are within these 12 seconds
	})

	t.Run("a CRD changed on a spoke is corrected, with an Event on the APIPropagation serving it", func(t *testing.T) {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+kro.VersionLabel+`":"tampered"}}}`))
		if err := e.spokes["spoke-a"].Patch(ctx, &extv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: webappCRD}}, patch,
			client.FieldOwner("crd-editor")); err != nil {
			t.Fatal(err)
		}
		e.served(t, "spoke-a", webappCRD, webapp, 1) // kro's labels as they were
		fleettest.Eventually(t, wait, "a DriftCorrected Event on APIPropagation platform", func() error {
			var events corev1.EventList
			if err := e.hub.List(ctx, &events, client.InNamespace(metav1.NamespaceDefault)); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Kind == "APIPropagation" && ev.InvolvedObject.Name == "platform" && ev.Reason == "DriftCorrected" &&
					strings.Contains(ev.Message, "cluster spoke-a: customresourcedefinition.apiextensions.k8s.io/"+webappCRD) && strings.Contains(ev.Message, "by crd-editor") {
					return nil
				}
			}
			return fmt.Errorf("not among %d Events", len(events.Items))
		})
	})

	t.Run("a breaking change is refused until the RGD allows it", func(t *testing.T) {
		// A new required field without a default breaks every existing instance.
		changed := e.updateRGD(t, webapp.Name, addField(t, "owner", "string | required=true"))
		e.status(t, "platform", "webapp blocked everywhere", func(p *flotillav1.APIPropagation) error {
			for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
				r := resultOf(p, s, webapp.Name)
				if r == nil || r.Phase != flotillav1.APIBlocked || r.Reason != flotillav1.ReasonBreakingChange || r.ServedGeneration != 1 {
					return fmt.Errorf("%s: %+v", s, r)
				}
			}
			if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.APIPropagationServing); c == nil || c.Reason != flotillav1.ReasonBlocked {
				return fmt.Errorf("Serving %+v", c)
			}
			return nil
		})
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			e.served(t, s, webappCRD, webapp, 1)
		}
		// Held on generation 1, a cluster expands instances with generation 1's graph, compiled
		// again after a restart from the revision its CRD names.
		e.controller.Stop()
		e.controller = hubtest.Run(e.t, e.fleet)
		e.instanceExpanded(t, "spoke-b", webapp, "held", nil)
		e.updateRGD(t, webapp.Name, func(rgd *kro.ResourceGraphDefinition) {
			if rgd.Annotations == nil {
				rgd.Annotations = map[string]string{}
			}
			rgd.Annotations[kro.AllowBreakingChangesAnnotation] = "true"
		})
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			e.served(t, s, webappCRD, changed, changed.Generation)
		}
		e.status(t, "platform", "serving generation 2 on 3 clusters", serving(3))
		e.revisionsKept(t, webapp.Name, webappCRD, 2)
	})

	t.Run("the APIPropagation pins a cluster to a kept revision", func(t *testing.T) {
		crd := &extv1.CustomResourceDefinition{}
		if err := e.spokes["spoke-c"].Get(ctx, client.ObjectKey{Name: webappCRD}, crd); err != nil {
			t.Fatal(err)
		}
		pinned, generation := crd.Annotations[flotillav1.AnnotationAPIRevision], crd.Annotations[flotillav1.AnnotationRGDGeneration]
		e.pin(t, webapp.Name, "spoke-c", pinned)
		// A compatible change: an optional field with a default.
		changed := e.updateRGD(t, webapp.Name, addField(t, "team", `string | default="platform"`))
		for _, s := range []string{"spoke-a", "spoke-b"} {
			e.served(t, s, webappCRD, changed, changed.Generation)
		}
		e.status(t, "platform", "spoke-c serving its pin", func(p *flotillav1.APIPropagation) error {
			r := resultOf(p, "spoke-c", webapp.Name)
			if r == nil || r.Phase != flotillav1.APIServing || fmt.Sprint(r.ServedGeneration) != generation || !strings.Contains(r.Message, pinned) {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			return nil
		})
		if err := e.spokes["spoke-c"].Get(ctx, client.ObjectKey{Name: webappCRD}, crd); err != nil {
			t.Fatal(err)
		}
		if got := crd.Annotations[flotillav1.AnnotationAPIRevision]; got != pinned {
			t.Errorf("spoke-c serves revision %s, pinned to %s", got, pinned)
		}
		e.revisionsKept(t, webapp.Name, webappCRD, 3)
		e.pin(t, webapp.Name, "spoke-c", "")
		e.served(t, "spoke-c", webappCRD, changed, changed.Generation)
	})

	t.Run("a change that does not compile on one spoke leaves it on the previous revision", func(t *testing.T) {
		// A kind served on spoke-a and spoke-b only; the RGD starts using it.
		for _, sp := range []string{"spoke-a", "spoke-b"} {
			e.installGadgets(t, sp)
		}
		before := &kro.ResourceGraphDefinition{}
		if err := e.hub.Get(ctx, client.ObjectKey{Name: webapp.Name}, before); err != nil {
			t.Fatal(err)
		}
		changed := e.updateRGD(t, webapp.Name, addResource(t, map[string]any{"id": "gadget", "template": map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "${schema.spec.name}"}, "spec": map[string]any{"size": 1}}}))
		for _, sp := range []string{"spoke-a", "spoke-b"} {
			e.served(t, sp, webappCRD, changed, changed.Generation)
		}
		e.status(t, "platform", "spoke-c held on the previous generation", func(p *flotillav1.APIPropagation) error {
			r := resultOf(p, "spoke-c", webapp.Name)
			if r == nil || r.Phase != flotillav1.APICompileFailed || r.Reason != flotillav1.ReasonSchemaNotFound || r.ServedGeneration != before.Generation {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			return nil
		})
		e.served(t, "spoke-c", webappCRD, before, before.Generation)
		// Its instances are expanded with the revision it serves.
		e.instanceExpanded(t, "spoke-c", webapp, "held-back", map[string]any{"owner": "team-a"}) // required since the breaking change
	})

	t.Run("deleting the APIPropagation leaves the CRDs on the spokes (Orphan)", func(t *testing.T) {
		if err := e.hub.Delete(ctx, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "the RGDs' Delivery records removed", func() error {
			var records flotillav1.DeliveryList
			if err := e.hub.List(ctx, &records, client.InNamespace(membership.Namespace)); err != nil {
				return err
			}
			for _, r := range records.Items {
				if r.Spec.Owner.Kind == "ResourceGraphDefinition" {
					return fmt.Errorf("record %s remains", r.Name)
				}
			}
			return nil
		})
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			for _, name := range []string{webappCRD, unknownCRD} {
				if err := e.spokes[s].Get(ctx, client.ObjectKey{Name: name}, &extv1.CustomResourceDefinition{}); err != nil {
					t.Errorf("CRD %s on %s: %v", name, s, err)
				}
			}
		}
	})

	t.Run("examples/fleet-api.yaml serves its API everywhere, taking over the CRD a kro on spoke-b made", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "fleet-api.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		local := e.kroCRD(t, "spoke-b", string(data))
		var rgd *kro.ResourceGraphDefinition
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var typeMeta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &typeMeta); err != nil {
				t.Fatal(err)
			}
			var obj client.Object
			switch typeMeta.Kind {
			case "ResourceGraphDefinition":
				rgd = &kro.ResourceGraphDefinition{}
				obj = rgd
			case "Placement":
				obj = &flotillav1.Placement{}
			case "APIPropagation":
				obj = &flotillav1.APIPropagation{}
			default:
				t.Fatalf("unexpected %s in the example", typeMeta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatal(err)
			}
			if err := e.hub.Create(ctx, obj); err != nil {
				t.Fatalf("create %s: %v", obj.GetName(), err)
			}
		}
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			e.served(t, s, "webservices.kro.run", rgd, 1)
		}
		e.status(t, "public-apis", "serving on 3 clusters", serving(3))
		taken := &extv1.CustomResourceDefinition{}
		if err := e.spokes["spoke-b"].Get(ctx, client.ObjectKey{Name: local.Name}, taken); err != nil {
			t.Fatal(err)
		}
		if taken.UID != local.UID {
			t.Errorf("the CRD kro made on spoke-b was replaced (uid %s, was %s)", taken.UID, local.UID)
		}
		if deletes := e.flotillaWrites(t, "spoke-b", time.Time{}, func(ev localfleet.AuditEvent) bool {
			return ev.Verb == "delete" && ev.ObjectRef.Name == local.Name
		}); len(deletes) != 0 {
			t.Errorf("the CRD was deleted on spoke-b: %v", deletes)
		}
	})

	t.Run("with removal Delete, deleting the RGD deletes its CRD everywhere", func(t *testing.T) {
		if err := e.hub.Create(ctx, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "cleanup"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{unknown.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
			Removal:                  flotillav1.DeletionDelete,
		}}); err != nil {
			t.Fatal(err)
		}
		e.status(t, "cleanup", "serving on 3 clusters", serving(3))
		fleettest.Eventually(t, wait, "the RGD carries Flotilla's finalizer", func() error {
			rgd := &kro.ResourceGraphDefinition{}
			if err := e.hub.Get(ctx, client.ObjectKey{Name: unknown.Name}, rgd); err != nil {
				return err
			}
			if !slices.Contains(rgd.Finalizers, flotillav1.FinalizerCleanup) {
				return fmt.Errorf("finalizers %v", rgd.Finalizers)
			}
			return nil
		})
		if err := e.hub.Delete(ctx, &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: unknown.Name}}); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			fleettest.Eventually(t, wait, "CRD "+unknownCRD+" deleted on "+s, func() error {
				err := e.spokes[s].Get(ctx, client.ObjectKey{Name: unknownCRD}, &extv1.CustomResourceDefinition{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there (%v)", err)
			})
			if err := e.spokes[s].Get(ctx, client.ObjectKey{Name: webappCRD}, &extv1.CustomResourceDefinition{}); err != nil {
				t.Errorf("the orphaned webapp CRD on %s: %v", s, err)
			}
		}
		fleettest.Eventually(t, wait, "the RGD gone from the hub", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Name: unknown.Name}, &kro.ResourceGraphDefinition{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	})

	t.Run("a CRD a kro made from another spec is checked as kro would: a breaking change is refused there", func(t *testing.T) {
		// spoke-c's kro served Counters with a field the hub's RGD no longer has.
		older := strings.Replace(countersRGD, "      name: string | required=true\n", "      name: string | required=true\n      legacy: string\n", 1)
		local := e.kroCRD(t, "spoke-c", older)
		counters := &kro.ResourceGraphDefinition{}
		if err := yaml.Unmarshal([]byte(countersRGD), counters); err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		for _, obj := range []client.Object{counters, &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "counters"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{counters.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
		}}} {
			if err := e.hub.Create(ctx, obj); err != nil {
				t.Fatalf("create %s: %v", obj.GetName(), err)
			}
		}
		e.status(t, "counters", "served on spoke-a and spoke-b, blocked on spoke-c", func(p *flotillav1.APIPropagation) error {
			for _, s := range []string{"spoke-a", "spoke-b"} {
				if r := resultOf(p, s, counters.Name); r == nil || r.Phase != flotillav1.APIServing {
					return fmt.Errorf("%s: %+v", s, r)
				}
			}
			r := resultOf(p, "spoke-c", counters.Name)
			if r == nil || r.Phase != flotillav1.APIBlocked || r.Reason != flotillav1.ReasonBreakingChange || !strings.Contains(r.Message, "legacy") {
				return fmt.Errorf("spoke-c: %+v", r)
			}
			return nil
		})
		if w := e.flotillaWrites(t, "spoke-c", since, func(ev localfleet.AuditEvent) bool { return ev.ObjectRef.Name == local.Name }); len(w) != 0 {
			t.Errorf("the CRD kro made was written although the change breaks it: %v", w)
		}

		updated := e.updateRGD(t, counters.Name, func(rgd *kro.ResourceGraphDefinition) {
			rgd.Annotations = map[string]string{kro.AllowBreakingChangesAnnotation: "true"}
		})
		e.served(t, "spoke-c", local.Name, updated, updated.Generation)
		taken := &extv1.CustomResourceDefinition{}
		if err := e.spokes["spoke-c"].Get(ctx, client.ObjectKey{Name: local.Name}, taken); err != nil {
			t.Fatal(err)
		}
		if taken.UID != local.UID {
			t.Errorf("the CRD kro made on spoke-c was replaced (uid %s, was %s)", taken.UID, local.UID)
		}

		// Marked hub-only, the RGD is served nowhere, and its CRDs stay where they are.
		since = time.Now()
		e.updateRGD(t, counters.Name, func(rgd *kro.ResourceGraphDefinition) {
			rgd.Annotations[fleetapi.HubOnlyMarker] = "false"
		})
		e.status(t, "counters", "the RGD stays on the hub", func(p *flotillav1.APIPropagation) error {
			for _, a := range p.Status.APIs {
				if a.Name == counters.Name && strings.Contains(a.Message, "stays on the hub") && a.ServingClusters == 0 {
					return nil
				}
			}
			return fmt.Errorf("apis %+v", p.Status.APIs)
		})
		fleettest.Eventually(t, wait, "the Delivery records of counters gone", func() error {
			records := &flotillav1.DeliveryList{}
			if err := e.hub.List(ctx, records, client.InNamespace(membership.Namespace)); err != nil {
				return err
			}
			for _, r := range records.Items {
				if r.Spec.Owner.Name == counters.Name {
					return fmt.Errorf("record %s remains", r.Name)
				}
			}
			return nil
		})
		for _, s := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			if w := e.flotillaWrites(t, s, since, func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" && ev.ObjectRef.Name == local.Name }); len(w) != 0 {
				t.Errorf("the CRD of a hub-only RGD was deleted on %s: %v", s, w)
			}
			if err := e.spokes[s].Get(ctx, client.ObjectKey{Name: local.Name}, &extv1.CustomResourceDefinition{}); err != nil {
				t.Errorf("the CRD of a hub-only RGD on %s: %v", s, err)
			}
		}
	})

	t.Run("with removal Delete, an RGD whose CRD has instances is deleted once confirmed, the instances' children first", func(t *testing.T) {
		tallies := &kro.ResourceGraphDefinition{}
		manifest := strings.NewReplacer("counters.flotilla.test", "tallies.flotilla.test", "kind: Counter", "kind: Tally").Replace(countersRGD)
		if err := yaml.Unmarshal([]byte(manifest), tallies); err != nil {
			t.Fatal(err)
		}
		fapi := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "tallies"}, Spec: flotillav1.APIPropagationSpec{
			ResourceGraphDefinitions: flotillav1.ResourceGraphDefinitionSelector{Names: []string{tallies.Name}},
			PlacementRef:             flotillav1.PlacementRef{Name: "fleet", Namespace: membership.Namespace},
			Removal:                  flotillav1.DeletionDelete,
		}}
		for _, obj := range []client.Object{tallies, fapi} {
			if err := e.hub.Create(ctx, obj); err != nil {
				t.Fatalf("create %s: %v", obj.GetName(), err)
			}
		}
		e.status(t, "tallies", "serving on 3 clusters", serving(3))
		crdName := kro.CRDName(tallies)
		instance := &unstructured.Unstructured{}
		instance.SetGroupVersionKind(kro.InstanceKind(tallies))
		instance.SetNamespace("default")
		instance.SetName("t1")
		instance.Object["spec"] = map[string]any{"name": "t1"}
		spoke := e.spokes["spoke-a"]
		if err := spoke.Create(ctx, instance); err != nil {
			t.Fatal(err)
		}
		child := client.ObjectKey{Namespace: "default", Name: "t1"}
		fleettest.Eventually(t, wait, "the instance's ConfigMap on spoke-a", func() error {
			return spoke.Get(ctx, child, &corev1.ConfigMap{})
		})

		since := time.Now()
		if err := e.hub.Delete(ctx, &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: tallies.Name}}); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"spoke-b", "spoke-c"} {
			fleettest.Eventually(t, wait, "CRD "+crdName+" deleted on "+s+", which has no instance", func() error {
				err := e.spokes[s].Get(ctx, client.ObjectKey{Name: crdName}, &extv1.CustomResourceDefinition{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there (%v)", err)
			})
		}
		e.status(t, "tallies", "spoke-a waits for the confirmation", func(p *flotillav1.APIPropagation) error {
			if r := resultOf(p, "spoke-a", tallies.Name); r == nil || r.Phase != flotillav1.APIRemoving ||
				!strings.Contains(r.Message, "kubectl annotate --overwrite apipropagation tallies "+flotillav1.AnnotationConfirmPrune+"=removed") {
				return fmt.Errorf("spoke-a: %+v", r)
			}
			return nil
		})
		if w := e.flotillaWrites(t, "spoke-a", since, func(ev localfleet.AuditEvent) bool {
			return ev.Verb == "delete" && (ev.ObjectRef.Name == crdName || ev.ObjectRef.Name == child.Name)
		}); len(w) != 0 {
			t.Errorf("deleted before the confirmation: %v", w)
		}

		confirmed := time.Now()
		if err := e.hub.Patch(ctx, fapi, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"`+flotillav1.AnnotationConfirmPrune+`":"removed"}}}`))); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, wait, "CRD "+crdName+" and the instance's ConfigMap gone from spoke-a", func() error {
			if err := spoke.Get(ctx, child, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				u := instance.DeepCopy()
				ierr := spoke.Get(ctx, client.ObjectKeyFromObject(u), u)
				crd := &extv1.CustomResourceDefinition{}
				cerr := spoke.Get(ctx, client.ObjectKey{Name: crdName}, crd)
				return fmt.Errorf("ConfigMap t1 still there (%v); instance %v %v %v; crd %v %v %+v", err, ierr, u.GetDeletionTimestamp(), u.GetFinalizers(), cerr, crd.DeletionTimestamp, crd.Status.Conditions)
			}
			if err := spoke.Get(ctx, client.ObjectKey{Name: crdName}, &extv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD still there (%v)", err)
			}
			return nil
		})
		fleettest.Eventually(t, wait, "the RGD gone from the hub", func() error {
			err := e.hub.Get(ctx, client.ObjectKey{Name: tallies.Name}, &kro.ResourceGraphDefinition{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		t.Logf("Flotilla's deletes on spoke-a after the confirmation: %v", e.flotillaWrites(t, "spoke-a", confirmed,
			func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" }))
	})
}

// countersRGD is a small fleet API whose CRD a kro on a spoke made from another spec.
const countersRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: counters.flotilla.test
spec:
  schema:
    apiVersion: v1alpha1
    kind: Counter
    spec:
      name: string | required=true
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}
      data:
        name: ${schema.spec.name}
`
