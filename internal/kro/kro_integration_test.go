package kro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

var crdResource = extv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// TestCompileAgainstALiveSpoke compiles kro's core-kinds corpus against a real kube-apiserver,
// serves the generated CRDs there, and drives one instance to ACTIVE with Evaluate, applying
// its plans by server-side apply as the deliverer will.
func TestCompileAgainstALiveSpoke(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.APIOnlySpoke("spoke-a"))
	cfg := fleet.Plane("spoke-a").RESTConfig()
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()

	if os.Getenv("FLOTILLA_KRO_RECORD") == "1" {
		if err := recordSnapshot(discovery.NewDiscoveryClientForConfigOrDie(cfg), snapshotDir); err != nil {
			t.Fatalf("record the spoke snapshot: %v", err)
		}
	}
	live := func() Target {
		target, err := TargetForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return target
	}

	t.Run("the snapshot compiles exactly as the live spoke does", func(t *testing.T) {
		target := live()
		for _, rel := range corpus() {
			rgd := corpusRGD(t, rel)
			fromLive, liveErr := Compile(rgd, target, DefaultConfig())
			fromSnapshot, snapErr := Compile(rgd, spokeSnapshot(t), DefaultConfig())
			if liveErr != nil || snapErr != nil {
				t.Errorf("%s: live: %v; snapshot: %v", rel, liveErr, snapErr)
				continue
			}
			if !reflect.DeepEqual(fromLive.CRD(), fromSnapshot.CRD()) {
				t.Errorf("%s: the CRD compiled from the snapshot differs from the live one: re-record with FLOTILLA_KRO_RECORD=1", rel)
			}
			if !reflect.DeepEqual(fromLive.Nodes(), fromSnapshot.Nodes()) {
				t.Errorf("%s: nodes differ: live %+v, snapshot %+v", rel, fromLive.Nodes(), fromSnapshot.Nodes())
			}
		}
	})

	t.Run("a chained kind is missing until the RGD that defines it is served", func(t *testing.T) {
		_, err := Compile(corpusRGD(t, corpusChained[0]), live(), DefaultConfig())
		var missing *SchemaNotFoundError
		if !errors.As(err, &missing) || !errors.Is(err, ErrSchemaNotFound) {
			t.Fatalf("compile before the tenant CRDs: %v, want a SchemaNotFoundError", err)
		}
		if missing.Kind.Group != "kro.run" || (missing.Kind.Kind != "TenantEnvironment" && missing.Kind.Kind != "TenantApplication") || missing.ResourceID == "" {
			t.Fatalf("missing %+v, want a tenant kind and the resource that uses it", missing)
		}
	})

	t.Run("every generated CRD is accepted and Established", func(t *testing.T) {
		target := live()
		served := map[string]string{}
		for _, rel := range corpus() {
			compiled, err := Compile(corpusRGD(t, rel), target, DefaultConfig())
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			crd := compiled.CRD()
			if other, ok := served[crd.Name]; ok {
				t.Logf("%s: CRD %s is also %s's; served once", rel, crd.Name, other)
				continue
			}
			served[crd.Name] = rel
			applyCRD(t, ctx, dyn, crd)
		}
		for name, rel := range served {
			live := waitEstablished(t, ctx, dyn, name)
			assertPath := filepath.Join(kroDir(t), filepath.Dir(rel), "instancecrd-assert.yaml")
			if _, err := os.Stat(assertPath); err == nil {
				want := readDocs(t, assertPath)[0].Object
				if err := subset(want, live.Object, ""); err != nil {
					t.Errorf("%s: the served CRD does not match kro's instancecrd-assert.yaml: %v", rel, err)
				}
			}
		}
	})

	// An Established CRD reaches /openapi/v3 a moment later: until then its kind is missing.
	t.Run("once its kinds are served, the chained RGD compiles", func(t *testing.T) {
		fleettest.Eventually(t, time.Minute, "the chained RGD compiles", func() error {
			_, err := Compile(corpusRGD(t, corpusChained[0]), live(), DefaultConfig())
			return err
		})
	})

	t.Run("a CRD missing on the spoke is a SchemaNotFoundError naming it, until it is installed", func(t *testing.T) {
		dir := filepath.Join(kroDir(t), "test/e2e/chainsaw/check-unknown-fields")
		rgd := readRGD(t, filepath.Join(dir, "rgd.yaml"))
		_, err := Compile(rgd, live(), DefaultConfig())
		var missing *SchemaNotFoundError
		if !errors.As(err, &missing) {
			t.Fatalf("compile without the AllowUnknown CRD: %v", err)
		}
		want := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "AllowUnknown"}
		if missing.ResourceID != "example" || missing.Kind != want {
			t.Fatalf("missing = %+v, want resource example of %v", missing, want)
		}
		crd := readDocs(t, filepath.Join(dir, "allow-unknown-crd.yaml"))[0]
		if _, err := dyn.Resource(crdResource).Apply(ctx, crd.GetName(), crd, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
			t.Fatal(err)
		}
		waitEstablished(t, ctx, dyn, crd.GetName())
		fleettest.Eventually(t, time.Minute, "compile once the CRD is served", func() error {
			_, err := Compile(rgd, live(), DefaultConfig())
			return err
		})
	})

	t.Run("an instance is expanded step by step to ACTIVE, and pruned", func(t *testing.T) {
		expandToActive(t, ctx, dyn, live())
	})
}

// expandToActive runs the loop the instance reconciler will run, with server-side apply in
// place of the deliverer.
func expandToActive(t *testing.T, ctx context.Context, dyn dynamic.Interface, target Target) {
	compiled, err := Compile(readRGD(t, "testdata/chain-rgd.yaml"), target, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	applyCRD(t, ctx, dyn, compiled.CRD())
	waitEstablished(t, ctx, dyn, compiled.CRD().Name)

	const ns = "default"
	settings := configMap(ns, "shop-settings", map[string]string{"audience": "world"})
	if _, err := dyn.Resource(configMaps).Namespace(ns).Create(ctx, settings, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	instances := dyn.Resource(compiled.InstanceResource()).Namespace(ns)
	instance := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": compiled.InstanceKind().GroupVersion().String(),
		"kind":       compiled.InstanceKind().Kind,
		"metadata":   map[string]any{"name": "shop", "namespace": ns},
		"spec":       map[string]any{"name": "shop", "colors": []any{"red", "blue"}},
	}}
	if _, err := instances.Create(ctx, instance, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	observer := liveObserver{dyn}
	pass := func() *Plan {
		t.Helper()
		current, err := instances.Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Evaluate(context.Background(), compiled, current, observer)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Err != nil {
			t.Fatalf("plan stopped: %v", plan.Err)
		}
		applyPlan(t, ctx, dyn, compiled, current, plan)
		return plan
	}

	deployments := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	fleettest.Eventually(t, 30*time.Second, "the Deployment is created once its ConfigMap exists", func() error {
		plan := pass()
		if _, err := deployments.Get(ctx, "shop", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("%v; plan %+v", err, plan.Nodes)
		}
		return nil
	})
	plan := pass()
	if plan.State != StateInProgress || node(plan, "service").Pending != true || plan.Prune {
		t.Fatalf("before the Deployment is available: state %s, service %+v, prune %v", plan.State, node(plan, "service"), plan.Prune)
	}
	// No controller runs on an API-only spoke: play the Deployment controller.
	deployment, err := deployments.Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		_ = unstructured.SetNestedField(deployment.Object, int64(1), "status", field)
	}
	if _, err := deployments.UpdateStatus(ctx, deployment, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 30*time.Second, "the instance is ACTIVE", func() error {
		plan := pass()
		got, err := instances.Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		state, _, _ := unstructured.NestedString(got.Object, "status", "state")
		if state != StateActive {
			return fmt.Errorf("state %q, nodes %+v", state, plan.Nodes)
		}
		return nil
	})

	got, err := instances.Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(got.Object, "status", "serviceName"); name != "shop" {
		t.Errorf("status.serviceName = %q, want shop", name)
	}
	if n, _, _ := unstructured.NestedInt64(got.Object, "status", "colors"); n != 2 {
		t.Errorf("status.colors = %d, want 2", n)
	}
	if ready := conditionStatus(got, "Ready"); ready != "True" {
		t.Errorf("Ready = %q, want True", ready)
	}
	if !slices.Contains(got.GetFinalizers(), Finalizer) || got.GetLabels()[ApplySetIDLabel] == "" {
		t.Errorf("instance metadata = %v %v", got.GetFinalizers(), got.GetLabels())
	}

	// includeWhen true adds the extra ConfigMap; false again prunes it; a color removed prunes
	// its item.
	if _, err := instances.Patch(ctx, "shop", "application/merge-patch+json", []byte(`{"spec":{"extra":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pass()
	if _, err := dyn.Resource(configMaps).Namespace(ns).Get(ctx, "shop-extra", metav1.GetOptions{}); err != nil {
		t.Fatalf("includeWhen true: %v", err)
	}
	if _, err := instances.Patch(ctx, "shop", "application/merge-patch+json", []byte(`{"spec":{"extra":false,"colors":["red"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	plan = pass()
	if !plan.Prune || !node(plan, "extra").Excluded {
		t.Fatalf("after includeWhen false: prune %v, extra %+v", plan.Prune, node(plan, "extra"))
	}
	for _, name := range []string{"shop-extra", "shop-blue"} {
		if _, err := dyn.Resource(configMaps).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s after prune: %v, want NotFound", name, err)
		}
	}
	if _, err := dyn.Resource(configMaps).Namespace(ns).Get(ctx, "shop-red", metav1.GetOptions{}); err != nil {
		t.Errorf("shop-red: %v", err)
	}
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// applyPlan writes a plan as the deliverer will: instance metadata, children, prune, status.
func applyPlan(t *testing.T, ctx context.Context, dyn dynamic.Interface, c *Compiled, instance *unstructured.Unstructured, plan *Plan) {
	t.Helper()
	apply := metav1.ApplyOptions{FieldManager: "flotilla-test", Force: true}
	instances := dyn.Resource(c.InstanceResource()).Namespace(instance.GetNamespace())
	parent := skeleton(instance)
	parent.SetLabels(plan.Instance.Labels)
	parent.SetAnnotations(plan.Instance.Annotations)
	parent.SetFinalizers([]string{plan.Instance.Finalizer})
	if _, err := instances.Apply(ctx, instance.GetName(), parent, apply); err != nil {
		t.Fatalf("instance metadata: %v", err)
	}
	for _, child := range plan.Children {
		gvr := nodeResource(c, child.NodeID)
		if _, err := dyn.Resource(gvr).Namespace(child.Object.GetNamespace()).Apply(ctx, child.Object.GetName(), child.Object, apply); err != nil {
			t.Fatalf("apply %s %s: %v", child.NodeID, child.Object.GetName(), err)
		}
	}
	if plan.Prune {
		keep := map[string]bool{}
		for _, child := range plan.Children {
			keep[child.Object.GetKind()+"/"+child.Object.GetName()] = true
		}
		selector := labels.SelectorFromSet(labels.Set{InstanceIDLabel: string(instance.GetUID())}).String()
		for _, n := range c.Nodes() {
			list, err := dyn.Resource(n.Resource).Namespace(instance.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range list.Items {
				if !keep[obj.GetKind()+"/"+obj.GetName()] {
					if err := dyn.Resource(n.Resource).Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						t.Fatal(err)
					}
				}
			}
		}
		parent.SetAnnotations(plan.Instance.AnnotationsAfterPrune)
		if _, err := instances.Apply(ctx, instance.GetName(), parent, apply); err != nil {
			t.Fatalf("instance metadata after prune: %v", err)
		}
	}
	status := skeleton(instance)
	status.Object["status"] = plan.Status
	if _, err := instances.ApplyStatus(ctx, instance.GetName(), status, apply); err != nil {
		t.Fatalf("instance status: %v", err)
	}
}

func skeleton(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{}
	out.SetAPIVersion(obj.GetAPIVersion())
	out.SetKind(obj.GetKind())
	out.SetName(obj.GetName())
	out.SetNamespace(obj.GetNamespace())
	return out
}

func nodeResource(c *Compiled, id string) schema.GroupVersionResource {
	for _, n := range c.Nodes() {
		if n.ID == id {
			return n.Resource
		}
	}
	return schema.GroupVersionResource{}
}

// liveObserver answers queries with reads: the instance reconciler will read spoke caches.
type liveObserver struct{ dyn dynamic.Interface }

func (o liveObserver) Observe(q Query) ([]*unstructured.Unstructured, error) {
	client := o.dyn.Resource(q.Resource).Namespace(q.Namespace)
	if q.Name != "" {
		obj, err := client.Get(context.Background(), q.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	list, err := client.List(context.Background(), metav1.ListOptions{LabelSelector: q.Selector.String()})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func applyCRD(t *testing.T, ctx context.Context, dyn dynamic.Interface, crd *extv1.CustomResourceDefinition) {
	t.Helper()
	raw, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: raw}
	obj.SetAPIVersion(extv1.SchemeGroupVersion.String())
	obj.SetKind("CustomResourceDefinition")
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	if _, err := dyn.Resource(crdResource).Apply(ctx, crd.Name, obj, metav1.ApplyOptions{FieldManager: "flotilla-test", Force: true}); err != nil {
		t.Fatalf("apply CRD %s: %v", crd.Name, err)
	}
}

func waitEstablished(t *testing.T, ctx context.Context, dyn dynamic.Interface, name string) *unstructured.Unstructured {
	t.Helper()
	var live *unstructured.Unstructured
	fleettest.Eventually(t, time.Minute, "CRD "+name+" Established", func() error {
		var err error
		if live, err = dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if conditionStatus(live, "Established") != "True" {
			return errors.New("not Established")
		}
		return nil
	})
	return live
}

func conditionStatus(obj *unstructured.Unstructured, conditionType string) string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// subset checks chainsaw's assertion semantics: every field of want is in got with the same
// value, and lists match element by element.
func subset(want, got any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %T, want an object", path, got)
		}
		for k, v := range w {
			if err := subset(v, g[k], path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want %d items", path, got, len(w))
		}
		for i := range w {
			if err := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	default:
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			return fmt.Errorf("%s: got %s, want %s", path, gj, wj)
		}
		return nil
	}
}
