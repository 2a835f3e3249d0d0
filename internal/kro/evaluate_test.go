package kro

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
)

const teamNamespace = "team"

func chainGraph(t testing.TB) *Compiled {
	t.Helper()
	c, err := Compile(readRGD(t, "testdata/chain-rgd.yaml"), spokeSnapshot(t), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newInstance is an instance as the spoke's API server returns it after creation.
func newInstance(t testing.TB, c *Compiled, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(c.InstanceKind())
	obj.SetName(name)
	if c.Namespaced() {
		obj.SetNamespace(teamNamespace)
	}
	obj.SetUID(types.UID("uid-" + name))
	obj.SetGeneration(1)
	obj.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	return defaulted(t, c, obj)
}

func settings() *unstructured.Unstructured {
	return configMap(teamNamespace, "shop-settings", map[string]string{"audience": "world"})
}

// cluster is an in-memory cluster that a plan is applied to, as the deliverer would.
type cluster struct{ objects Objects }

func (c *cluster) Observe(q Query) ([]*unstructured.Unstructured, error) { return c.objects.Observe(q) }

// apply writes a plan's children and status, prunes when the plan allows it, and returns the
// instance as the cluster now shows it.
func (c *cluster) apply(instance *unstructured.Unstructured, plan *Plan) *unstructured.Unstructured {
	for _, child := range plan.Children {
		c.put(child.Object.DeepCopy())
	}
	if plan.Prune {
		keep := map[string]bool{}
		for _, child := range plan.Children {
			keep[identity(child.Object)] = true
		}
		c.objects = slices.DeleteFunc(c.objects, func(obj *unstructured.Unstructured) bool {
			return obj.GetLabels()[InstanceIDLabel] == string(instance.GetUID()) && !keep[identity(obj)]
		})
	}
	out := instance.DeepCopy()
	out.SetLabels(plan.Instance.Labels)
	out.SetAnnotations(plan.Instance.Annotations)
	out.SetFinalizers([]string{plan.Instance.Finalizer})
	out.Object["status"] = plan.Status
	return out
}

// put creates or replaces an object, keeping the status the cluster gave it.
func (c *cluster) put(obj *unstructured.Unstructured) {
	for i, existing := range c.objects {
		if identity(existing) == identity(obj) {
			if status, ok := existing.Object["status"]; ok {
				obj.Object["status"] = status
			}
			c.objects[i] = obj
			return
		}
	}
	c.objects = append(c.objects, obj)
}

func (c *cluster) get(kind, name string) *unstructured.Unstructured {
	for _, obj := range c.objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	return nil
}

func identity(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

func evaluate(t testing.TB, c *Compiled, instance *unstructured.Unstructured, observer Observer) *Plan {
	t.Helper()
	plan, err := Evaluate(context.Background(), c, instance, observer)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func childNames(plan *Plan) []string {
	var names []string
	for _, child := range plan.Children {
		names = append(names, child.NodeID+":"+child.Object.GetName())
	}
	return names
}

func condition(status map[string]any, conditionType string) map[string]any {
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			return m
		}
	}
	return nil
}

func TestEvaluateWaitsOnData(t *testing.T) {
	c := chainGraph(t)
	instance := newInstance(t, c, "shop", map[string]any{"name": "shop", "colors": []any{"red", "blue"}})
	plan := evaluate(t, c, instance, Objects{})

	if n := node(plan, "settings"); n.State != "WAITING_FOR_READINESS" || !strings.Contains(n.Message, "not found") {
		t.Errorf("settings (externalRef, absent) = %+v", n)
	}
	for _, id := range []string{"config", "deployment", "service"} {
		if n := node(plan, id); !n.Pending || n.State != "IN_PROGRESS" {
			t.Errorf("%s = %+v, want data pending", id, n)
		}
	}
	for _, id := range []string{"extra", "extraNote"} {
		if n := node(plan, id); !n.Excluded || n.State != "SKIPPED" {
			t.Errorf("%s = %+v, want excluded by includeWhen", id, n)
		}
	}
	if got, want := childNames(plan), []string{"palette:shop-red", "palette:shop-blue"}; !reflect.DeepEqual(got, want) {
		t.Errorf("children %v, want %v: what resolves is applied while the rest waits", got, want)
	}
	if plan.Prune || plan.Err != nil {
		t.Errorf("prune %v, err %v: nothing may be pruned while data is pending", plan.Prune, plan.Err)
	}
	if plan.State != StateInProgress || plan.Status["state"] != StateInProgress {
		t.Errorf("state %q / %v", plan.State, plan.Status["state"])
	}
	rr := condition(plan.Status, "ResourcesReady")
	if rr["status"] != "False" || rr["reason"] != "NotReady" {
		t.Errorf("ResourcesReady = %v", rr)
	}
	if _, ok := plan.Status["serviceName"]; ok {
		t.Errorf("status.serviceName = %v before the service exists", plan.Status["serviceName"])
	}
}

// TestEvaluateToActive applies each plan to an in-memory cluster until the instance is ACTIVE,
// playing the Deployment controller once the Deployment exists.
func TestEvaluateToActive(t *testing.T) {
	c := chainGraph(t)
	world := &cluster{objects: Objects{settings()}}
	instance := newInstance(t, c, "shop", map[string]any{"name": "shop", "colors": []any{"red", "blue"}})

	var steps [][]string
	var plan *Plan
	for pass := 0; pass < 6; pass++ {
		plan = evaluate(t, c, instance, world)
		if plan.Err != nil {
			t.Fatalf("pass %d: %v", pass, plan.Err)
		}
		steps = append(steps, childNames(plan))
		instance = world.apply(instance, plan)
		if d := world.get("Deployment", "shop"); d != nil {
			_ = unstructured.SetNestedField(d.Object, int64(1), "status", "availableReplicas")
		}
		if plan.State == StateActive {
			break
		}
	}
	want := [][]string{
		{"config:shop-config", "palette:shop-red", "palette:shop-blue"},
		{"config:shop-config", "deployment:shop", "palette:shop-red", "palette:shop-blue"},
		{"config:shop-config", "deployment:shop", "service:shop", "palette:shop-red", "palette:shop-blue"},
		{"config:shop-config", "deployment:shop", "service:shop", "palette:shop-red", "palette:shop-blue"},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("children pass by pass:\n%v\nwant\n%v", steps, want)
	}
	if plan.State != StateActive || !plan.Prune {
		t.Fatalf("state %s prune %v, nodes %+v", plan.State, plan.Prune, plan.Nodes)
	}
	for _, n := range plan.Nodes {
		if n.State != "SYNCED" && n.State != "SKIPPED" {
			t.Errorf("node %+v", n)
		}
	}
	if got := fmt.Sprint(plan.Status["availableReplicas"], " ", plan.Status["serviceName"], " ", plan.Status["colors"]); got != "1 shop 2" {
		t.Errorf("status fields %q, want availableReplicas 1, serviceName shop, colors 2", got)
	}
	for _, ct := range []string{"InstanceManaged", "GraphResolved", "ResourcesReady", "Ready"} {
		if cond := condition(plan.Status, ct); cond["status"] != "True" || cond["observedGeneration"] != int64(1) {
			t.Errorf("%s = %v", ct, cond)
		}
	}
	if msg := world.get("ConfigMap", "shop-config").Object["data"].(map[string]any)["message"]; msg != "hello, world" {
		t.Errorf("config message %q: the default greeting and the external reference should both be used", msg)
	}

	// readyWhen: the Deployment losing its replicas takes the instance back to IN_PROGRESS, and
	// dependents keep their objects (nothing resolved is withdrawn).
	_ = unstructured.SetNestedField(world.get("Deployment", "shop").Object, int64(0), "status", "availableReplicas")
	plan = evaluate(t, c, instance, world)
	if n := node(plan, "deployment"); n.State != "WAITING_FOR_READINESS" || n.Ready || !strings.Contains(n.Message, "readyWhen") {
		t.Errorf("deployment = %+v, want waiting on readyWhen", n)
	}
	if plan.State != StateInProgress || condition(plan.Status, "Ready")["status"] != "False" {
		t.Errorf("state %s, Ready %v", plan.State, condition(plan.Status, "Ready"))
	}
	if n := node(plan, "service"); !n.Pending {
		t.Errorf("service = %+v, want pending on the deployment's readiness", n)
	}
	if plan.Prune {
		t.Error("prune allowed while the service is pending")
	}
}

func converged(t *testing.T, spec map[string]any) (*Compiled, *cluster, *unstructured.Unstructured) {
	t.Helper()
	c := chainGraph(t)
	world := &cluster{objects: Objects{settings()}}
	instance := newInstance(t, c, "shop", spec)
	for pass := 0; pass < 8; pass++ {
		plan := evaluate(t, c, instance, world)
		instance = world.apply(instance, plan)
		if d := world.get("Deployment", "shop"); d != nil {
			_ = unstructured.SetNestedField(d.Object, int64(1), "status", "availableReplicas")
		}
		if plan.State == StateActive {
			return c, world, instance
		}
	}
	t.Fatal("the instance never became ACTIVE")
	return nil, nil, nil
}

func TestEvaluateContract(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red", "blue"}})
	plan := evaluate(t, c, instance, world)
	applySetID := applyset.ID(instance)

	orders := map[string]int{}
	for _, n := range c.Nodes() {
		orders[n.ID] = n.ApplyOrder
	}
	for _, child := range plan.Children {
		labels := child.Object.GetLabels()
		want := map[string]string{
			OwnedLabel: "true", VersionLabel: "v0.9.4", ManagedByLabel: "kro",
			InstanceIDLabel: "uid-shop", InstanceNameLabel: "shop", InstanceNamespaceLabel: teamNamespace,
			InstanceGroupLabel: "kro.run", InstanceVersionLabel: "v1alpha1", InstanceKindLabel: "Chain",
			NodeIDLabel: child.NodeID, ApplySetPartOfLabel: applySetID,
		}
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", child.Object.GetName(), k, labels[k], v)
			}
		}
		if got := child.Object.GetAnnotations()[ApplyOrderAnnotation]; got != fmt.Sprint(orders[child.NodeID]) || child.ApplyOrder != orders[child.NodeID] {
			t.Errorf("%s: apply order %q / %d, want %d", child.Object.GetName(), got, child.ApplyOrder, orders[child.NodeID])
		}
		if child.Object.GetNamespace() != teamNamespace || len(child.Object.GetOwnerReferences()) > 0 {
			t.Errorf("%s: namespace %q, owner references %v", child.Object.GetName(), child.Object.GetNamespace(), child.Object.GetOwnerReferences())
		}
	}
	for i, name := range []string{"shop-red", "shop-blue"} {
		labels := world.get("ConfigMap", name).GetLabels()
		if labels[CollectionIndexLabel] != fmt.Sprint(i) || labels[CollectionSizeLabel] != "2" {
			t.Errorf("%s: collection labels %v", name, labels)
		}
	}
	if orders["service"] <= orders["deployment"] || orders["deployment"] <= orders["config"] {
		t.Errorf("apply orders %v: a dependent is removed before what it depends on", orders)
	}

	meta := plan.Instance
	wantLabels := map[string]string{
		OwnedLabel: "true", VersionLabel: "v0.9.4", RGDIDLabel: "uid-chains.flotilla.test",
		RGDNameLabel: "chains.flotilla.test", ApplySetIDLabel: applySetID,
	}
	if !reflect.DeepEqual(meta.Labels, wantLabels) || meta.Finalizer != "kro.run/finalizer" {
		t.Errorf("instance labels %v finalizer %q", meta.Labels, meta.Finalizer)
	}
	if meta.Annotations[ApplySetToolingAnnotation] != "kro/v0.9.4" ||
		meta.Annotations[ApplySetGroupKindsAnnotation] != "ConfigMap,Deployment.apps,Service" ||
		meta.Annotations[ApplySetNamespacesAnnotation] != "" {
		t.Errorf("instance annotations %v", meta.Annotations)
	}
	// kro accepts the inventory: a spoke-local kro can take the instance over.
	if err := applyset.ValidateParentInventory(instance); err != nil {
		t.Errorf("kro refuses the inventory: %v", err)
	}
}

func TestEvaluateIncludeWhen(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})

	_ = unstructured.SetNestedField(instance.Object, true, "spec", "extra")
	plan := evaluate(t, c, instance, world)
	if !slices.Contains(childNames(plan), "extra:shop-extra") {
		t.Fatalf("children %v: includeWhen true should add extra", childNames(plan))
	}
	if n := node(plan, "extraNote"); !n.Pending {
		t.Errorf("extraNote = %+v, want pending until extra exists", n)
	}
	instance = world.apply(instance, plan)
	for pass := 0; pass < 3 && plan.State != StateActive; pass++ {
		plan = evaluate(t, c, instance, world)
		instance = world.apply(instance, plan)
	}
	if world.get("ConfigMap", "shop-extra-note") == nil || plan.State != StateActive {
		t.Fatalf("extraNote not created after extra: %v, state %s", childNames(plan), plan.State)
	}

	// includeWhen false again: both are excluded (the dependent with it) and pruned.
	_ = unstructured.SetNestedField(instance.Object, false, "spec", "extra")
	plan = evaluate(t, c, instance, world)
	if !node(plan, "extra").Excluded || !node(plan, "extraNote").Excluded || !plan.Prune {
		t.Fatalf("extra %+v, extraNote %+v, prune %v", node(plan, "extra"), node(plan, "extraNote"), plan.Prune)
	}
	world.apply(instance, plan)
	if world.get("ConfigMap", "shop-extra") != nil || world.get("ConfigMap", "shop-extra-note") != nil {
		t.Error("excluded objects survived the prune")
	}
	if plan.State != StateActive {
		t.Errorf("state %s: excluded resources count as done", plan.State)
	}
}

func TestEvaluateForEach(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red", "blue", "green"}})
	if plan := evaluate(t, c, instance, world); plan.Status["colors"] != int64(3) {
		t.Fatalf("colors = %v", plan.Status["colors"])
	}

	_ = unstructured.SetNestedSlice(instance.Object, []any{"blue"}, "spec", "colors")
	plan := evaluate(t, c, instance, world)
	instance = world.apply(instance, plan)
	if world.get("ConfigMap", "shop-red") != nil || world.get("ConfigMap", "shop-blue") == nil {
		t.Fatal("a removed item was not pruned, or the kept one was")
	}
	if labels := world.get("ConfigMap", "shop-blue").GetLabels(); labels[CollectionIndexLabel] != "0" || labels[CollectionSizeLabel] != "1" {
		t.Errorf("the kept item is relabelled with its new position: %v", labels)
	}

	_ = unstructured.SetNestedSlice(instance.Object, []any{}, "spec", "colors")
	plan = evaluate(t, c, instance, world)
	if n := node(plan, "palette"); n.State != "SYNCED" || !n.Ready {
		t.Errorf("empty forEach = %+v, want synced", n)
	}
	instance = world.apply(instance, plan)
	if world.get("ConfigMap", "shop-blue") != nil || plan.State != StateActive {
		t.Errorf("after emptying: blue %v, state %s", world.get("ConfigMap", "shop-blue") != nil, plan.State)
	}
	// Status fields read what exists: the pruned item counts until the next pass.
	if plan = evaluate(t, c, instance, world); plan.Status["colors"] != int64(0) {
		t.Errorf("colors = %v after the prune", plan.Status["colors"])
	}
}

func TestEvaluateSuspended(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
	instance.SetAnnotations(map[string]string{ReconcileAnnotation: "suspended"})
	plan := evaluate(t, c, instance, world)
	if !plan.Suspended || plan.Prune || len(plan.Children) != 0 {
		t.Fatalf("suspended %v prune %v children %v", plan.Suspended, plan.Prune, childNames(plan))
	}
	if rr := condition(plan.Status, "ResourcesReady"); rr["reason"] != "ReconciliationSuspended" {
		t.Errorf("ResourcesReady = %v", rr)
	}
	// kro's state machine counts a pass without nodes as all synced: a suspended instance says
	// ACTIVE with Ready False, in kro as here.
	if plan.State != StateActive || condition(plan.Status, "Ready")["status"] != "False" {
		t.Errorf("state %s, Ready %v", plan.State, condition(plan.Status, "Ready"))
	}
}

// TestEvaluateStopsLikeKro: the passes in which kro applies nothing at all.
func TestEvaluateStopsLikeKro(t *testing.T) {
	t.Run("a child being deleted", func(t *testing.T) {
		c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
		now := metav1.Now()
		world.get("Service", "shop").SetDeletionTimestamp(&now)
		plan := evaluate(t, c, instance, world)
		var deleting *ResourceDeletingError
		if !errors.As(plan.Err, &deleting) || deleting.NodeID != "service" || len(plan.Children) != 0 || plan.Prune {
			t.Fatalf("err %v, children %v, prune %v", plan.Err, childNames(plan), plan.Prune)
		}
		if rr := condition(plan.Status, "ResourcesReady"); rr["reason"] != "ResourceDeleting" {
			t.Errorf("ResourcesReady = %v", rr)
		}
	})
	t.Run("the cluster cannot be read", func(t *testing.T) {
		c := chainGraph(t)
		instance := newInstance(t, c, "shop", map[string]any{"name": "shop", "colors": []any{"red"}})
		plan := evaluate(t, c, instance, failingObserver{})
		if plan.Err == nil || len(plan.Children) != 0 || plan.Prune || plan.State != StateError {
			t.Fatalf("err %v, children %v, prune %v, state %s", plan.Err, childNames(plan), plan.Prune, plan.State)
		}
	})
	t.Run("two resources name the same object", func(t *testing.T) {
		rgd := readRGD(t, "testdata/chain-rgd.yaml")
		rgd.Spec.Resources = rgd.Spec.Resources[:2]
		rgd.Spec.Schema.Status.Raw = nil
		twin := rgd.Spec.Resources[1].DeepCopy()
		twin.ID = "twin"
		rgd.Spec.Resources = append(rgd.Spec.Resources, twin)
		c, err := Compile(rgd, spokeSnapshot(t), DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		instance := newInstance(t, c, "shop", map[string]any{"name": "shop"})
		plan := evaluate(t, c, instance, Objects{settings()})
		if !errors.Is(plan.Err, applyset.ErrDuplicateResource) || len(plan.Children) != 0 {
			t.Fatalf("err %v, children %v", plan.Err, childNames(plan))
		}
	})
	t.Run("an instance whose inventory kro would not trust", func(t *testing.T) {
		c := chainGraph(t)
		instance := newInstance(t, c, "shop", map[string]any{"name": "shop"})
		instance.SetLabels(map[string]string{ApplySetIDLabel: "applyset-somebody-else-v1"})
		plan := evaluate(t, c, instance, Objects{settings()})
		if plan.Err == nil || len(plan.Children) != 0 || plan.Instance.Annotations != nil {
			t.Fatalf("err %v, children %v, annotations %v", plan.Err, childNames(plan), plan.Instance.Annotations)
		}
		if im := condition(plan.Status, "InstanceManaged"); im["status"] != "False" || im["reason"] != "ManagementFailed" {
			t.Errorf("InstanceManaged = %v", im)
		}
	})
}

func TestEvaluateRefusesAnotherApplySetsObject(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
	config := world.get("ConfigMap", "shop-config")
	labels := config.GetLabels()
	labels[ApplySetPartOfLabel] = "applyset-other-v1"
	config.SetLabels(labels)

	plan := evaluate(t, c, instance, world)
	if n := node(plan, "config"); n.State != "ERROR" || !strings.Contains(n.Message, "belongs to a different ApplySet") {
		t.Errorf("config = %+v", n)
	}
	if slices.Contains(childNames(plan), "config:shop-config") || plan.Prune || plan.State != StateError {
		t.Errorf("children %v, prune %v, state %s", childNames(plan), plan.Prune, plan.State)
	}
}

// TestEvaluateSteadyState: once the status is written, the next pass computes the same status,
// so nothing is written again.
func TestEvaluateSteadyState(t *testing.T) {
	c, world, instance := converged(t, map[string]any{"name": "shop", "colors": []any{"red"}})
	plan := evaluate(t, c, instance, world)
	if !reflect.DeepEqual(plan.Status, instance.Object["status"]) {
		t.Errorf("the status of an ACTIVE instance changes from pass to pass:\n%v\n%v", plan.Status, instance.Object["status"])
	}

	// Also while waiting: the messages name nodes in a stable order.
	c = chainGraph(t)
	instance = newInstance(t, c, "shop", map[string]any{"name": "shop", "colors": []any{"red"}})
	first := evaluate(t, c, instance, Objects{})
	instance.Object["status"] = first.Status
	for i := 0; i < 5; i++ {
		if again := evaluate(t, c, instance, Objects{}); !reflect.DeepEqual(again.Status, first.Status) {
			t.Fatalf("pass %d: status changed without a change on the cluster:\n%v\n%v", i, again.Status, first.Status)
		}
	}
}

func TestEvaluateAuthorConditions(t *testing.T) {
	rgd := readRGD(t, "testdata/chain-rgd.yaml")
	rgd.Spec.Schema.Status.Raw = mustJSON(t, map[string]any{
		"serviceName": "${service.metadata.name}",
		"conditions": []any{
			"${runtime.newCondition({type: 'ServiceUp', status: 'True', reason: 'Created', message: service.metadata.name})}",
		},
	})
	c, err := Compile(rgd, spokeSnapshot(t), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasAuthorConditions() {
		t.Fatal("HasAuthorConditions = false")
	}
	world := &cluster{objects: Objects{settings()}}
	instance := newInstance(t, c, "shop", map[string]any{"name": "shop", "colors": []any{"red"}})
	var plan *Plan
	for pass := 0; pass < 6; pass++ {
		plan = evaluate(t, c, instance, world)
		instance = world.apply(instance, plan)
		if d := world.get("Deployment", "shop"); d != nil {
			_ = unstructured.SetNestedField(d.Object, int64(1), "status", "availableReplicas")
		}
	}
	conditions, _ := plan.Status["conditions"].([]any)
	if len(conditions) != 1 || condition(plan.Status, "ServiceUp")["message"] != "shop" {
		t.Fatalf("conditions %v, want only the author's", conditions)
	}
	if plan.State != StateActive {
		t.Errorf("state %s", plan.State)
	}
}

func TestEvaluateRefusesADeletingInstance(t *testing.T) {
	c := chainGraph(t)
	instance := newInstance(t, c, "shop", map[string]any{"name": "shop"})
	now := metav1.Now()
	instance.SetDeletionTimestamp(&now)
	if _, err := Evaluate(context.Background(), c, instance, Objects{}); !errors.Is(err, ErrInstanceDeleting) {
		t.Fatalf("%v, want ErrInstanceDeleting", err)
	}
}

// TestEvaluateCorpusInstances runs kro's own instance files through their RGDs on an empty
// cluster and then with the children they asked for: no pass may stop with an error.
func TestEvaluateCorpusInstances(t *testing.T) {
	for _, rel := range corpus() {
		instancePath := filepath.Join(kroDir(t), filepath.Dir(rel), "instance.yaml")
		docs := readDocsIfAny(t, instancePath)
		if len(docs) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			c, err := Compile(corpusRGD(t, rel), spokeSnapshot(t), DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			instance := docs[0]
			if c.Namespaced() && instance.GetNamespace() == "" {
				instance.SetNamespace("default")
			}
			instance.SetUID("uid-instance")
			instance = defaulted(t, c, instance)
			world := &cluster{}
			for pass := 0; pass < 4; pass++ {
				plan := evaluate(t, c, instance, world)
				if plan.Err != nil {
					t.Fatalf("pass %d: %v", pass, plan.Err)
				}
				instance = world.apply(instance, plan)
			}
		})
	}
}

type failingObserver struct{}

func (failingObserver) Observe(Query) ([]*unstructured.Unstructured, error) {
	return nil, errors.New("cache not synced")
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
