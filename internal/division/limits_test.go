package division

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// requesting returns a workload whose one container requests cpu.
func requesting(name string, replicas int64, cpu string) *unstructured.Unstructured {
	u := workload("Deployment", name, replicas)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "app",
		"resources": map[string]any{"requests": map[string]any{"cpu": cpu}}}}, "spec", "template", "spec", "containers")
	return u
}

func TestPlacementLimits(t *testing.T) {
	objs := []*unstructured.Unstructured{requesting("web", 12, "1"), requesting("api", 6, "500m")}
	in := Input{Chosen: three, Totals: Workloads(objs), Requests: Requests(objs), Seed: "team/web",
		// a admits 4 cpu; b admits 3 pods; c is not limited.
		Free: map[string]Usage{"a": {"cpu": 4000}, "b": {"pods": 3}}}
	out := Divide(in)
	onA := out.Shares[api]["a"]*500 + out.Shares[web]["a"]*1000
	if onA > 4000 {
		t.Errorf("cluster a holds %d millicores of the two workloads, its limit is 4000: %v", onA, out.Shares)
	}
	if onB := out.Shares[api]["b"] + out.Shares[web]["b"]; onB > 3 {
		t.Errorf("cluster b holds %d pods, its limit is 3: %v", onB, out.Shares)
	}
	for w, total := range in.Totals {
		var sum int64
		for _, n := range out.Shares[w] {
			sum += n
		}
		if sum != total {
			t.Errorf("%s: %d placed, want %d (c has no limit): %v", w, sum, total, out.Shares[w])
		}
	}

	// Every cluster limited, and too little room: what does not fit is not placed, and said so.
	in.Free = map[string]Usage{"a": {"cpu": 2000}, "b": {"cpu": 2000}, "c": {"cpu": 2000}}
	in.Totals, in.Requests = Workloads(objs[:1]), Requests(objs[:1])
	out = Divide(in)
	if got := out.Shares[web]; got["a"]+got["b"]+got["c"] != 6 || out.Messages[web] == "" {
		t.Errorf("6 of 12 replicas fit in three clusters of 2 cpu: %v, message %q", got, out.Messages[web])
	}

	// A limit lowered below what others placed admits nothing more.
	if free := Free(Usage{"cpu": 1000}, Usage{"cpu": 3000, "memory": 5}); free["cpu"] != -2000 || len(free) != 1 {
		t.Errorf("Free: %v", free)
	}
	if Free(nil, Usage{"cpu": 1}) != nil {
		t.Error("no limits must admit everything")
	}
}

func TestUsageOf(t *testing.T) {
	objs := []*unstructured.Unstructured{requesting("web", 3, "250m"), workload("Deployment", "api", 2)}
	got := UsageOf(objs)
	if got["cpu"] != 750 || got["pods"] != 5 {
		t.Errorf("usage: %v, want 750 millicores and 5 pods", got)
	}
	list := got.ResourceList()
	if !list.Cpu().Equal(resource.MustParse("750m")) || list.Pods().Value() != 5 {
		t.Errorf("resource list: %v", list)
	}
	back := UsageFrom(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("750m"), corev1.ResourcePods: resource.MustParse("5"),
		corev1.ResourceName("nvidia.com/gpu"): resource.MustParse("1")})
	if back["cpu"] != 750 || back["pods"] != 5 || len(back) != 2 {
		t.Errorf("UsageFrom: %v", back)
	}
}

func TestTiers(t *testing.T) {
	objs := []*unstructured.Unstructured{workload("Deployment", "web", 10)}
	in := ForPlacement(&flotillav1.Placement{Spec: flotillav1.PlacementSpec{
		Replicas: weighted(flotillav1.ClusterReplicas{Name: "cap", ClusterNames: []string{"a", "b"}, Max: ptr(intstr.FromInt32(3))}),
		Tiers:    []flotillav1.ClusterTier{{Name: "primary", ClusterNames: []string{"a", "b"}}},
	}})
	in.Chosen, in.Totals, in.Seed = three, Workloads(objs), "team/web"
	got := Divide(in).Shares[web]
	if got["a"] != 3 || got["b"] != 3 || got["c"] != 4 {
		t.Errorf("the primary tier fills to its max (3 each), the rest overflows to c: %v", got)
	}
	in.Totals = map[string]int64{web: 5}
	if got := Divide(in).Shares[web]; got["c"] != 0 || got["a"]+got["b"] != 5 {
		t.Errorf("5 fit in the primary tier, c stays a warm standby at 0: %v", got)
	}
}

func TestFits(t *testing.T) {
	objs := []*unstructured.Unstructured{workload("Deployment", "web", 12)}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	in := Input{Chosen: three, Totals: Workloads(objs), Seed: "team/web", Room: map[string]map[string]int64{"a": {"cpu": 4000}},
		Fits: map[string]map[string]Fit{web: {"a": {Replicas: 1, Allocatable: cpu}}}}
	got := Divide(in).Shares[web]
	if got["a"] != 1 || got["b"]+got["c"] != 11 {
		t.Errorf("a fits 1: the rest goes to b and c: %v", got)
	}
	in.Totals = map[string]int64{web: 12}
	in.Fits[web] = map[string]Fit{"a": {Replicas: 1, Allocatable: cpu}, "b": {Replicas: 1, Allocatable: nil}, "c": {Replicas: 1}}
	if got := Divide(in).Shares[web]; got["a"]+got["b"]+got["c"] != 12 {
		t.Errorf("every cluster full: the rest is placed anyway (Pending pods ask for room): %v", got)
	}
	in.Room["a"] = map[string]int64{"cpu": 8000}
	in.Fits = map[string]map[string]Fit{web: {"a": {Replicas: 1, Allocatable: cpu}}}
	if got := Divide(in).Shares[web]; got["a"] != 4 {
		t.Errorf("a's Nodes changed: what it fit is forgotten, the weights divide again: %v", got)
	}
}

func TestUsageOfCountsAnHPAsMaximum(t *testing.T) {
	hpa := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"minReplicas": int64(1), "maxReplicas": int64(10),
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}}
	hpa.SetAPIVersion("autoscaling/v2")
	hpa.SetKind("HorizontalPodAutoscaler")
	hpa.SetNamespace("team")
	hpa.SetName("web")
	if got := UsageOf([]*unstructured.Unstructured{requesting("web", 2, "1"), hpa}); got["cpu"] != 10000 || got["pods"] != 10 {
		t.Errorf("an HPA may scale web to 10 replicas of 1 cpu: %v", got)
	}
}
