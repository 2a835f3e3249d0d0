package main

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestScheduleIsDeterministic(t *testing.T) {
	a := schedule(42, 10*time.Minute, 3, 1)
	b := schedule(42, 10*time.Minute, 3, 1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	if reflect.DeepEqual(a, schedule(43, 10*time.Minute, 3, 1)) {
		t.Fatal("seeds 42 and 43 gave the same schedule")
	}
	kinds := map[faultKind]int{}
	last := time.Duration(0)
	for _, f := range a {
		kinds[f.Kind]++
		if f.At-last < minFaultGap || f.At >= 10*time.Minute {
			t.Fatalf("fault %v at %s: gaps must be at least %s and within the run", f, f.At, minFaultGap)
		}
		if f.Kind == faultKillHub && f.At > 5*time.Minute {
			t.Fatalf("hub kill at %s, after the first half", f.At)
		}
		if f.Target < 0 || f.Target >= 3 {
			t.Fatalf("fault %v targets spoke %d of 3", f, f.Target)
		}
		last = f.At
	}
	for _, k := range faultKinds {
		if kinds[k] == 0 {
			t.Errorf("a 10-minute schedule has no %s: %v", k, kinds)
		}
	}
}

func TestHubEditsAreDeterministic(t *testing.T) {
	draw := func(seed uint64) []editOp {
		m, rng := newModel(), rand.New(rand.NewPCG(seed, 0xed17))
		var ops []editOp
		for range 200 {
			op := m.next(rng, 3)
			m.apply(op)
			ops = append(ops, op)
		}
		return ops
	}
	if !reflect.DeepEqual(draw(7), draw(7)) {
		t.Fatal("the same seed gave two sequences of hub changes")
	}
	for _, op := range draw(7) {
		if op.Kind == "ConfigMap" && op.Verb == "delete" && strings.HasSuffix(op.Name, "-anchor") {
			t.Fatalf("an anchor ConfigMap was deleted: %s", op)
		}
		if op.Kind == "Deployment" && op.Verb != "delete" && op.Dep.Replicas < 3 {
			t.Fatalf("%s has %d replicas, fewer than the spokes", op, op.Dep.Replicas)
		}
	}
}

func TestWrongfulDeletes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	h := newWantHistory()
	cm1, cm2, cm3 := cmKey("p0-cm-1"), cmKey("p0-cm-2"), cmKey("p0-anchor")
	// cm1, cm2 and the anchor created at 0; cm1 deleted at 100 and created again at 200.
	h.record(map[objKey]bool{}, map[objKey]bool{cm1: true, cm2: true, cm3: true}, at(0), at(0))
	h.record(map[objKey]bool{cm1: true, cm2: true, cm3: true}, map[objKey]bool{cm2: true, cm3: true}, at(100), at(101))
	h.record(map[objKey]bool{cm2: true, cm3: true}, map[objKey]bool{cm1: true, cm2: true, cm3: true}, at(199), at(200))
	deletes := []spokeDelete{
		{Cluster: "spoke-1", Object: cm1, At: at(105), Code: 200},                  // rightful: unwanted since 100
		{Cluster: "spoke-2", Object: cm1, At: at(200 + 29), Code: 200},             // rightful: within staleness of the re-create
		{Cluster: "spoke-3", Object: cm1, At: at(200 + 31), Code: 200},             // wrongful: wanted again for longer than staleness
		{Cluster: "spoke-1", Object: cm2, At: at(50), Code: 200},                   // wrongful: never unwanted
		{Cluster: "spoke-1", Object: cm1, At: at(99), Code: 200},                   // wrongful: before the hub delete was sent
		{Cluster: "spoke-1", Object: cmKey("someone-else"), At: at(10), Code: 404}, // wrongful: never the soak's
		{Cluster: "spoke-2", Object: depKey("d0"), At: at(10), Code: 200},          // wrongful: never the soak's
	}
	wrong := wrongfulDeletes(deletes, h)
	var got []string
	for _, w := range wrong {
		got = append(got, w.Cluster+" "+string(w.Object)+" "+w.At.Sub(t0).String())
	}
	want := []string{"spoke-3 configmaps/soak/p0-cm-1 3m51s", "spoke-1 configmaps/soak/p0-cm-2 50s", "spoke-1 configmaps/soak/p0-cm-1 1m39s",
		"spoke-1 configmaps/soak/someone-else 10s", "spoke-2 deployments/soak/d0 10s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("wrongful deletes:\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(wrong[1].Why, "wanted it throughout") {
		t.Fatalf("the reason for a never-unwanted object: %q", wrong[1].Why)
	}
}

func TestDiff(t *testing.T) {
	cluster := func(name string) flotillav1.Cluster {
		return flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	h := hubState{
		Clusters: []flotillav1.Cluster{cluster("spoke-1"), cluster("spoke-2"), cluster("spoke-3")},
		Placements: []flotillav1.Placement{
			{ObjectMeta: metav1.ObjectMeta{Name: allPlacement, Namespace: ns}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
			{ObjectMeta: metav1.ObjectMeta{Name: divPlacement, Namespace: ns}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
				Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}}},
		},
		Propagations: []flotillav1.Propagation{*propagation("p0")},
		ConfigMaps:   []corev1.ConfigMap{*configMap("p0-anchor", hubCM{Prop: "p0", Value: "a"}), *configMap("p1-cm-1", hubCM{Prop: "p1", Value: "b"})},
		Deployments:  []appsv1.Deployment{*deployment("d0", hubDep{Replicas: 7, Image: "img:1"})},
	}
	delivered := func(replicas int32, value, image string) spokeState {
		d := deployment("d0", hubDep{Replicas: replicas, Image: image})
		return spokeState{ConfigMaps: []corev1.ConfigMap{*configMap("p0-anchor", hubCM{Prop: "p0", Value: value})}, Deployments: []appsv1.Deployment{*d}}
	}
	good := map[string]spokeState{"spoke-1": delivered(3, "a", "img:1"), "spoke-2": delivered(2, "a", "img:1"), "spoke-3": delivered(2, "a", "img:1")}
	if d, err := diff(h, good); err != nil || len(d) != 0 {
		t.Fatalf("a converged fleet differs: %v %v", d, err)
	}
	extra := *configMap("p1-cm-1", hubCM{Prop: "p1", Value: "b"}) // its Propagation does not exist
	bad := map[string]spokeState{
		"spoke-1": delivered(3, "changed", "img:1"),
		"spoke-2": {Deployments: []appsv1.Deployment{*deployment("d0", hubDep{Replicas: 3, Image: "img:0"})}},
		"spoke-3": {ConfigMaps: []corev1.ConfigMap{*configMap("p0-anchor", hubCM{Prop: "p0", Value: "a"}), extra},
			Deployments: []appsv1.Deployment{*deployment("d0", hubDep{Replicas: 2, Image: "img:1"})}},
	}
	d, err := diff(h, bad)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range d {
		got = append(got, x.Cluster+" "+string(x.Object)+" "+x.Field)
	}
	want := []string{
		"spoke-1 configmaps/soak/p0-anchor data",
		"spoke-2 configmaps/soak/p0-anchor object",
		"spoke-2 deployments/soak/d0 spec.template.spec.containers[0].image",
		"spoke-3 configmaps/soak/p1-cm-1 object",
		"(all clusters) deployments/soak/d0 sum of spec.replicas",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("differences:\n got %q\nwant %q", got, want)
	}
	// A share outside floor..ceil of the even split is a difference even if the sum is right.
	skewed := map[string]spokeState{"spoke-1": delivered(5, "a", "img:1"), "spoke-2": delivered(1, "a", "img:1"), "spoke-3": delivered(1, "a", "img:1")}
	d, _ = diff(h, skewed)
	if len(d) != 3 || d[0].Field != "spec.replicas" || d[0].Want != "2..3 of 7" {
		t.Fatalf("skewed shares: %v", d)
	}
}

func TestMemoryFlat(t *testing.T) {
	t0 := time.Now()
	var samples []rssSample
	// Life 1 grows fast but was killed; life 2 is flat: only life 2 is judged.
	for i := range 60 {
		samples = append(samples, rssSample{Replica: 0, Life: 1, At: t0.Add(time.Duration(i) * sampleEvery), Bytes: uint64(100+10*i) << 20})
	}
	for i := range 60 {
		samples = append(samples, rssSample{Replica: 0, Life: 2, At: t0.Add(time.Duration(60+i) * sampleEvery), Bytes: uint64(100+i%3) << 20})
	}
	v := memoryFlat(samples)
	if len(v) != 1 || !v[0].Judged || !v[0].Pass || v[0].Life != 2 {
		t.Fatalf("flat last life: %+v", v)
	}
	for i := range 60 {
		samples = append(samples, rssSample{Replica: 0, Life: 3, At: t0.Add(time.Duration(120+i) * sampleEvery), Bytes: uint64(100+4*i) << 20})
	}
	v = memoryFlat(samples)
	if len(v) != 1 || !v[0].Judged || v[0].Pass {
		t.Fatalf("a growing last life passed: %+v", v)
	}
	v = memoryFlat(samples[:5])
	if len(v) != 1 || v[0].Judged || !v[0].Pass {
		t.Fatalf("a short life is reported, not judged: %+v", v)
	}
}

func TestInstanceChildren(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	h := newWantHistory()
	// app-0 created on spoke-1 at 10, deleted at 100; on spoke-2 created at 10 and kept.
	recordInstances(h, []instanceWrite{
		{Cluster: "spoke-1", Name: "app-0", Verb: "create", Received: at(10), Completed: at(10)},
		{Cluster: "spoke-2", Name: "app-0", Verb: "create", Received: at(10), Completed: at(10)},
		{Cluster: "spoke-1", Name: "app-0", Verb: "delete", Received: at(100), Completed: at(100)},
	})
	dep1, dep2 := childKeys("spoke-1", "app-0")[1], childKeys("spoke-2", "app-0")[1]
	wrong := wrongfulDeletes([]spokeDelete{{Cluster: "spoke-1", Object: dep1, At: at(101)}, {Cluster: "spoke-2", Object: dep2, At: at(101)}}, h)
	if len(wrong) != 1 || wrong[0].Cluster != "spoke-2" {
		t.Fatalf("only the delete on spoke-2, where app-0 lives, is wrongful: %v", wrong)
	}

	inst := unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "SoakApp",
		"metadata": map[string]any{"name": "app-0", "namespace": appsNS}, "spec": map[string]any{"image": "img:2", "replicas": int64(2)}}}
	owner := render.Owner{Kind: instanceKind, Namespace: appsNS, Name: "app-0", Cluster: "spoke-1"}.LabelValue()
	marks := metav1.ObjectMeta{Namespace: appsNS, Labels: map[string]string{flotillav1.LabelOwner: owner}}
	cm := corev1.ConfigMap{ObjectMeta: marks, Data: map[string]string{"image": "img:2"}}
	cm.Name = "app-0-config"
	d := *deployment("app-0", hubDep{Replicas: 2, Image: "img:2"})
	d.ObjectMeta = marks
	d.Name = "app-0"
	good := spokeState{Instances: []unstructured.Unstructured{inst}, AppConfigMaps: []corev1.ConfigMap{cm}, AppDeployments: []appsv1.Deployment{d}}
	if diffs := instanceDiff("spoke-1", good); len(diffs) != 0 {
		t.Fatalf("expanded as wanted, yet: %v", diffs)
	}
	// On spoke-2 the same objects carry spoke-1's owner label; and a stale Deployment is left.
	stale := *d.DeepCopy()
	stale.Name = "app-9"
	bad := spokeState{Instances: []unstructured.Unstructured{inst}, AppConfigMaps: []corev1.ConfigMap{cm}, AppDeployments: []appsv1.Deployment{d, stale}}
	var got []string
	for _, x := range instanceDiff("spoke-2", bad) {
		got = append(got, string(x.Object)+" "+x.Field)
	}
	want := []string{"configmaps/soak-apps/app-0-config@spoke-2 metadata.labels.flotilla.dev/owner",
		"deployments/soak-apps/app-0@spoke-2 metadata.labels.flotilla.dev/owner", "deployments/soak-apps/app-9 object"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("differences:\n got %q\nwant %q", got, want)
	}
}

func TestSplitObjKey(t *testing.T) {
	for key, want := range map[objKey][3]string{
		cmKey("p0-cm-3"): {"configmaps", ns, "p0-cm-3"},
		objKey("deployments/soak-apps/app-1@spoke-2"): {"deployments", "soak-apps", "app-1"},
	} {
		r, n, name, ok := splitObjKey(key)
		if !ok || [3]string{r, n, name} != want {
			t.Errorf("splitObjKey(%q) = %q %q %q %v, want %v", key, r, n, name, ok, want)
		}
	}
	if _, _, _, ok := splitObjKey("configmaps/p0"); ok {
		t.Error("a key without a namespace was read")
	}
}
