package instances

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

var (
	chainKind  = schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "Chain"}
	configMaps = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	services   = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	secrets    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
)

func chainInstance() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"name": "shop"}}}
	u.SetGroupVersionKind(chainKind)
	u.SetNamespace("team")
	u.SetName("shop")
	u.SetUID("uid-shop")
	return u
}

func child(kind schema.GroupVersionKind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetGroupVersionKind(kind)
	u.SetNamespace("team")
	u.SetName(name)
	u.SetLabels(map[string]string{kro.NodeIDLabel: name, kro.InstanceNameLabel: "shop"})
	return u
}

func activeStatus() map[string]any {
	cond := func(t string) map[string]any {
		return map[string]any{"type": t, "status": "True", "reason": "x", "message": "y", "lastTransitionTime": "2026-05-01T00:00:00Z", "observedGeneration": int64(1)}
	}
	return map[string]any{"state": kro.StateActive, "serviceName": "shop",
		"conditions": []any{cond("InstanceManaged"), cond("GraphResolved"), cond("ResourcesReady"), cond("Ready")}}
}

// plan is a pass kro found ACTIVE, with one ConfigMap child whose live copy is given.
func plan(live *unstructured.Unstructured) *kro.Plan {
	return &kro.Plan{
		Children: []kro.Child{{NodeID: "config", ApplyOrder: 1, Object: child(configMaps, "shop-config"), Live: live}},
		Prune:    true,
		State:    kro.StateActive,
		Status:   activeStatus(),
		Instance: kro.InstanceMetadata{
			Labels:                map[string]string{kro.OwnedLabel: "true"},
			Finalizer:             kro.Finalizer,
			Annotations:           map[string]string{"inventory": "superset"},
			AnnotationsAfterPrune: map[string]string{"inventory": "exact"},
		},
	}
}

var owner = render.Owner{Kind: "Chain.kro.run", Namespace: "team", Name: "shop", Cluster: "spoke-1"}

func noKinds(schema.GroupKind) (schema.GroupVersionKind, bool, error) {
	return schema.GroupVersionKind{}, false, nil
}

// delivered is the child as the spoke cache shows it once the deliverer applied it.
func delivered(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	obj, err := render.Render(child(configMaps, "shop-config"), owner)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// A pass becomes one job for the instance on its own cluster: the children carry kro's labels
// and Flotilla's markers, kro's prune decision and metadata go with them, and an ACTIVE status
// whose children the cache shows as delivered is written as kro computed it.
func TestJobOfAnActivePass(t *testing.T) {
	x := expansion{owner: owner, instance: chainInstance(), childKinds: []schema.GroupVersionKind{configMaps, services},
		plan: plan(delivered(t)), kindOf: noKinds}
	job, err := x.job()
	if err != nil {
		t.Fatal(err)
	}
	if job.Owner != owner || job.Cluster != "spoke-1" || !job.Prune || len(job.Objects) != 1 {
		t.Fatalf("job %+v", job)
	}
	obj := job.Objects[0]
	if obj.GetLabels()[kro.NodeIDLabel] != "shop-config" || obj.GetLabels()[flotillav1.LabelOwner] != owner.LabelValue() ||
		obj.GetAnnotations()[flotillav1.AnnotationOwner] != owner.String() {
		t.Errorf("child metadata %v %v", obj.GetLabels(), obj.GetAnnotations())
	}
	if job.Revision != render.Revision(job.Objects) {
		t.Error("revision is not the objects'")
	}
	if !reflect.DeepEqual(job.PruneKinds, []schema.GroupVersionKind{configMaps, services}) {
		t.Errorf("prune kinds %v", job.PruneKinds)
	}
	if len(job.Status) != 1 || !reflect.DeepEqual(job.Status[0].Object["status"], activeStatus()) {
		t.Errorf("status %v", job.Status)
	}
	if s := job.Status[0]; s.GetName() != "shop" || s.GetNamespace() != "team" || s.GetKind() != "Chain" || s.GetLabels() != nil {
		t.Errorf("status target %v", s.Object)
	}
	m := job.OwnerMeta
	if m == nil || m.Release || m.Object.GetFinalizers()[0] != kro.Finalizer || m.Object.GetLabels()[kro.OwnedLabel] != "true" ||
		m.Object.GetAnnotations()["inventory"] != "superset" || m.AnnotationsAfterPrune["inventory"] != "exact" {
		t.Errorf("owner metadata %+v", m)
	}
	if job.PruneBudget >= 0 {
		t.Errorf("prune budget %d: an instance's children are pruned as kro decides", job.PruneBudget)
	}
}

// kro judges readiness on what the spoke cache shows; until the cache shows what is being
// delivered, an ACTIVE pass is reported IN_PROGRESS, naming what is not delivered yet.
func TestJobHoldsActiveUntilDelivered(t *testing.T) {
	stale := delivered(t)
	stale.Object["data"] = map[string]any{"k": "old"}
	stale, _ = render.Rehash(stale)
	kros := child(configMaps, "shop-config")
	kros.Object["data"] = map[string]any{"k": "other"}
	for name, live := range map[string]*unstructured.Unstructured{"absent": nil, "previous content": stale, "a kro's, other content": kros} {
		t.Run(name, func(t *testing.T) {
			x := expansion{owner: owner, instance: chainInstance(), plan: plan(live), kindOf: noKinds}
			job, err := x.job()
			if err != nil {
				t.Fatal(err)
			}
			status := job.Status[0].Object["status"].(map[string]any)
			if status["state"] != kro.StateInProgress || !strings.Contains(fmt.Sprint(status["conditions"]), "configmap team/shop-config not yet delivered") {
				t.Fatalf("status %v", status)
			}
			if status["serviceName"] != "shop" {
				t.Errorf("status fields lost: %v", status)
			}
		})
	}
}

// A child a kro on the cluster applied, holding what kro resolves (its labels may differ: kro's
// version label, no Flotilla markers), is judged as it is: taking it over changes only its
// metadata, so an ACTIVE pass is not held.
func TestJobTakesOverActive(t *testing.T) {
	kros := child(configMaps, "shop-config")
	kros.SetLabels(map[string]string{kro.NodeIDLabel: "shop-config", kro.InstanceNameLabel: "shop", kro.VersionLabel: "devel"})
	kros.SetUID("uid-kro-made")
	kros.Object["data"] = map[string]any{"k": "v", "added": "by someone else"}
	x := expansion{owner: owner, instance: chainInstance(), plan: plan(kros), kindOf: noKinds}
	job, err := x.job()
	if err != nil {
		t.Fatal(err)
	}
	if status := job.Status[0].Object["status"]; !reflect.DeepEqual(status, activeStatus()) {
		t.Fatalf("status %v, want kro's ACTIVE", status)
	}
}

// A failed delivery of this revision shows on the instance: permanent failures (a child in
// another namespace) as ERROR, others as IN_PROGRESS. A failure of another revision does not.
func TestJobShowsDeliveryFailures(t *testing.T) {
	base := expansion{owner: owner, instance: chainInstance(), plan: plan(delivered(t)), kindOf: noKinds}
	first, err := base.job()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		result deliver.Result
		state  string
	}{
		{"permanent", deliver.Result{Revision: first.Revision, Failed: 1, Permanent: true, Message: `namespace "other" not allowed`}, kro.StateError},
		{"transient", deliver.Result{Revision: first.Revision, Failed: 1, Message: "connection refused"}, kro.StateInProgress},
		{"another revision", deliver.Result{Revision: "old", Failed: 1, Permanent: true, Message: "gone wrong"}, kro.StateActive},
		{"disconnected", deliver.Result{Revision: first.Revision, Disconnected: true, Message: "not connected"}, kro.StateActive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := base
			x.plan = plan(delivered(t))
			x.previous, x.hasPrevious = c.result, true
			job, err := x.job()
			if err != nil {
				t.Fatal(err)
			}
			status := job.Status[0].Object["status"].(map[string]any)
			if status["state"] != c.state {
				t.Fatalf("state %v, want %s", status["state"], c.state)
			}
			if c.state != kro.StateActive && !strings.Contains(fmt.Sprint(status["conditions"]), c.result.Message) {
				t.Errorf("conditions do not say why: %v", status["conditions"])
			}
		})
	}
}

// Prune kinds include what the instance's inventory lists, mapped to what the spoke serves.
func TestJobPruneKindsFromTheInventory(t *testing.T) {
	p := plan(delivered(t))
	p.Instance.Annotations = map[string]string{kro.ApplySetGroupKindsAnnotation: "ConfigMap,Secret,Gone.example.dev"}
	kindOf := func(gk schema.GroupKind) (schema.GroupVersionKind, bool, error) {
		if gk.Group == "example.dev" {
			return schema.GroupVersionKind{}, false, nil
		}
		return gk.WithVersion("v1"), true, nil
	}
	job, err := expansion{owner: owner, instance: chainInstance(), childKinds: []schema.GroupVersionKind{configMaps}, plan: p, kindOf: kindOf}.job()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(job.PruneKinds, []schema.GroupVersionKind{configMaps, secrets}) {
		t.Errorf("prune kinds %v", job.PruneKinds)
	}
	failing := func(schema.GroupKind) (schema.GroupVersionKind, bool, error) {
		return schema.GroupVersionKind{}, false, errors.New("discovery down")
	}
	if _, err := (expansion{owner: owner, instance: chainInstance(), plan: p, kindOf: failing}).job(); err == nil {
		t.Error("a failed mapping is not an error: kinds could be missed by the prune")
	}
}

// An instance kro refuses to manage (its inventory is invalid) gets no metadata; a pass that
// stopped on an error applies nothing and prunes nothing, but shows its status.
func TestJobOfAFailedPass(t *testing.T) {
	p := plan(delivered(t))
	p.Children, p.Prune, p.State = nil, false, kro.StateInProgress
	p.Err = fmt.Errorf("wrapped: %w", kro.ErrInvalidInventory)
	job, err := expansion{owner: owner, instance: chainInstance(), plan: p, kindOf: noKinds}.job()
	if err != nil {
		t.Fatal(err)
	}
	if job.OwnerMeta != nil || len(job.Objects) != 0 || job.Prune || len(job.Status) != 1 {
		t.Errorf("job %+v", job)
	}
}

// An instance being deleted whose inventory kro would refuse is not cleaned up by guesswork:
// it shows why deletion is blocked, and the job deletes nothing and keeps the finalizer.
func TestDeletionJobBlockedByAnInvalidInventory(t *testing.T) {
	inst := chainInstance()
	now := metav1.Now()
	inst.SetDeletionTimestamp(&now)
	inst.SetFinalizers([]string{kro.Finalizer})
	inst.SetAnnotations(map[string]string{kro.ApplySetToolingAnnotation: "kro/v0.9.4"})
	job, err := deletionJob(owner, inst, false, false, noKinds)
	if err != nil {
		t.Fatal(err)
	}
	if job.Prune || job.OwnerMeta != nil || len(job.PruneKinds) != 0 {
		t.Errorf("a blocked deletion still deletes: %+v", job)
	}
	status := job.Status[0].Object["status"].(map[string]any)
	if status["state"] != kro.StateDeleting || !strings.Contains(fmt.Sprint(status["conditions"]), "deletion blocked") {
		t.Errorf("status %v", status)
	}
}

// A child delivered for an instance routes its events to that instance; anything else does not.
func TestInstanceOfAChild(t *testing.T) {
	obj := delivered(t)
	labels := obj.GetLabels()
	for k, v := range map[string]string{kro.InstanceGroupLabel: "kro.run", kro.InstanceVersionLabel: "v1alpha1",
		kro.InstanceKindLabel: "Chain", kro.InstanceNamespaceLabel: "team"} {
		labels[k] = v
	}
	obj.SetLabels(labels)
	req, ok := instanceOf("spoke-1", obj)
	if !ok || req.Request != (Instance{Kind: chainKind, Namespace: "team", Name: "shop"}) || req.ClusterName != "spoke-1" {
		t.Fatalf("instanceOf = %+v %v", req, ok)
	}
	if ownerOf(req) != owner {
		t.Errorf("owner %v, want %v", ownerOf(req), owner)
	}
	if _, ok := instanceOf("spoke-2", obj); ok {
		t.Error("a child delivered for an instance on another cluster was routed here")
	}
	unmanaged := obj.DeepCopy()
	unmanaged.SetAnnotations(nil)
	if _, ok := instanceOf("spoke-1", unmanaged); ok {
		t.Error("an object Flotilla did not deliver was routed to an instance")
	}
}

// A cluster-scoped instance is not expanded (its children could go anywhere): it shows ERROR
// saying so, and nothing else is written, not even kro's finalizer.
func TestJobOfARefusedInstance(t *testing.T) {
	inst := chainInstance()
	inst.SetNamespace("")
	clusterOwner := render.Owner{Kind: owner.Kind, Name: "shop", Cluster: "spoke-1"}
	job, err := expansion{owner: clusterOwner, instance: inst, plan: plan(nil), kindOf: noKinds, refused: clusterScopedRefusal}.job()
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Objects) != 0 || job.Prune || job.OwnerMeta != nil || len(job.PruneKinds) != 0 {
		t.Errorf("a refused instance still delivers: %+v", job)
	}
	status := job.Status[0].Object["status"].(map[string]any)
	if status["state"] != kro.StateError || !strings.Contains(fmt.Sprint(status["conditions"]), "cluster-scoped") {
		t.Errorf("status %v", status)
	}
}

// An instance lacks its metadata when a label, an annotation key or the finalizer is gone; an
// inventory value before or after a prune both count as present.
func TestLacksMeta(t *testing.T) {
	m := ownerMeta(chainInstance(), plan(nil).Instance)
	inst := chainInstance()
	inst.SetLabels(map[string]string{kro.OwnedLabel: "true", "user": "x"})
	inst.SetAnnotations(map[string]string{"inventory": "exact"})
	inst.SetFinalizers([]string{"other", kro.Finalizer})
	if lacksMeta(inst, m) {
		t.Error("an instance with all its metadata lacks some")
	}
	for name, strip := range map[string]func(*unstructured.Unstructured){
		"finalizer":  func(u *unstructured.Unstructured) { u.SetFinalizers([]string{"other"}) },
		"label":      func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{kro.OwnedLabel: "false"}) },
		"annotation": func(u *unstructured.Unstructured) { u.SetAnnotations(nil) },
	} {
		u := inst.DeepCopy()
		strip(u)
		if !lacksMeta(u, m) {
			t.Errorf("an instance without its %s does not lack it", name)
		}
	}
	if lacksMeta(inst, nil) {
		t.Error("a job keeping no metadata finds some lacking")
	}
}
