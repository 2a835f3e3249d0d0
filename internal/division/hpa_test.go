package division

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestDivideBounds(t *testing.T) {
	tests := []struct {
		name     string
		min, max int32
		shares   map[string]int64
		want     map[string]Bounds // nil: checked by the invariants only
	}{
		{"even shares, min 3 max 30 (example E)", 3, 30, map[string]int64{"c1": 2, "c2": 2, "c3": 2},
			map[string]Bounds{"c1": {1, 10}, "c2": {1, 10}, "c3": {1, 10}}},
		{"weights 1:2:3", 6, 60, map[string]int64{"a": 1, "b": 2, "c": 3},
			map[string]Bounds{"a": {1, 10}, "b": {2, 20}, "c": {3, 30}}},
		{"a share of 0 gets no HPA", 3, 30, map[string]int64{"c1": 3, "c2": 3, "c3": 0}, nil},
		{"bounds below the number of clusters: 1 each", 1, 2, map[string]int64{"a": 2, "b": 2, "c": 2},
			map[string]Bounds{"a": {1, 1}, "b": {1, 1}, "c": {1, 1}}},
		{"a small share still gets 1", 1, 10, map[string]int64{"a": 100, "b": 1, "c": 1},
			map[string]Bounds{"a": {1, 8}, "b": {1, 1}, "c": {1, 1}}},
		{"min equal to max", 9, 9, map[string]int64{"a": 1, "b": 2}, map[string]Bounds{"a": {3, 3}, "b": {6, 6}}},
		{"no share anywhere: no HPA anywhere", 1, 10, map[string]int64{"a": 0}, map[string]Bounds{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DivideBounds(tt.min, tt.max, tt.shares, "autoscaling/HorizontalPodAutoscaler/team/web")
			if tt.want != nil && len(tt.want)+len(got) > 0 && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("DivideBounds = %v, want %v", got, tt.want)
			}
			if err := boundsInvariants(tt.min, tt.max, tt.shares, got); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("3/3/0: the fleet's bounds over the two that run it, c3 withheld", func(t *testing.T) {
		got := DivideBounds(3, 30, map[string]int64{"c1": 3, "c2": 3, "c3": 0}, "autoscaling/HorizontalPodAutoscaler/team/web")
		if _, given := got["c3"]; given || len(got) != 2 {
			t.Fatalf("DivideBounds = %v, want c1 and c2 only", got)
		}
		if got["c1"].Max != 15 || got["c2"].Max != 15 || got["c1"].Min+got["c2"].Min != 3 {
			t.Fatalf("DivideBounds = %v, want max 15 each and min 2 and 1", got)
		}
	})
}

// A division of random bounds over random shares keeps the invariants.
func TestDivideBoundsInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		shares := map[string]int64{}
		for c := range rng.IntN(6) + 1 {
			shares[fmt.Sprint("c", c)] = int64(rng.IntN(5))
		}
		maxReplicas := int32(rng.IntN(50) + 1)
		minReplicas := int32(rng.IntN(int(maxReplicas)) + 1)
		got := DivideBounds(minReplicas, maxReplicas, shares, fmt.Sprint("seed", i))
		if err := boundsInvariants(minReplicas, maxReplicas, shares, got); err != nil {
			t.Fatalf("min %d max %d over %v: %v", minReplicas, maxReplicas, shares, err)
		}
	}
}

// boundsInvariants: exactly the clusters with a share get bounds, at least 1 each with
// min ≤ max, adding up to the fleet's bounds when those leave at least 1 for every cluster.
func boundsInvariants(minReplicas, maxReplicas int32, shares map[string]int64, got map[string]Bounds) error {
	var running, sumMin, sumMax int32
	for c, n := range shares {
		b, given := got[c]
		if given != (n > 0) {
			return fmt.Errorf("cluster %s with share %d: bounds given %v", c, n, given)
		}
		if !given {
			continue
		}
		if b.Min < 1 || b.Min > b.Max {
			return fmt.Errorf("cluster %s: bounds %+v", c, b)
		}
		running++
		sumMin, sumMax = sumMin+b.Min, sumMax+b.Max
	}
	if len(got) != int(running) {
		return fmt.Errorf("bounds %v for clusters without a share", got)
	}
	if running == 0 {
		return nil
	}
	if maxReplicas >= running && sumMax != maxReplicas {
		return fmt.Errorf("max adds up to %d, want %d: %v", sumMax, maxReplicas, got)
	}
	if minReplicas >= running && sumMin != minReplicas {
		return fmt.Errorf("min adds up to %d, want %d: %v", sumMin, minReplicas, got)
	}
	return nil
}

func hpa(name, targetAPIVersion, targetKind, target string, minReplicas *int64, maxReplicas int64) *unstructured.Unstructured {
	spec := map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": targetAPIVersion, "kind": targetKind, "name": target},
		"maxReplicas":    maxReplicas,
	}
	if minReplicas != nil {
		spec["minReplicas"] = *minReplicas
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("autoscaling/v2")
	u.SetKind("HorizontalPodAutoscaler")
	u.SetNamespace("team")
	u.SetName(name)
	return u
}

func TestPassWithAnHPA(t *testing.T) {
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	rendered := func(objs ...*unstructured.Unstructured) []*unstructured.Unstructured {
		out := make([]*unstructured.Unstructured, len(objs))
		for i, o := range objs {
			r, err := render.Render(o, owner)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = r
		}
		return out
	}
	objs := rendered(workload("Deployment", "web", 6), hpa("web", "apps/v1", "Deployment", "web", ptr(int64(3)), 30),
		workload("Deployment", "api", 4), hpa("api", "apps/v1", "Deployment", "api", nil, 8),
		hpa("other-group", "example.com/v1", "Deployment", "web", nil, 8))
	pass := NewPass(objs, Replicas{web: {"c1": 3, "c2": 3, "c3": 0}})
	byName := func(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		out := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			out[o.GetKind()+"/"+o.GetName()] = o
		}
		return out
	}
	nested := func(o *unstructured.Unstructured, path ...string) int64 {
		n, _, _ := unstructured.NestedInt64(o.Object, path...)
		return n
	}

	var minSum int64
	for _, c := range []string{"c1", "c2"} {
		out, err := pass.Apply(objs, c)
		if err != nil {
			t.Fatal(err)
		}
		got := byName(out)
		d, h := got["Deployment/web"], got["HorizontalPodAutoscaler/web"]
		if h == nil {
			t.Fatalf("%s: the HPA of web is not delivered", c)
		}
		if n := nested(d, "spec", "replicas"); n != 3 {
			t.Errorf("%s: web has %d replicas, want 3", c, n)
		}
		if v := d.GetAnnotations()[flotillav1.AnnotationShare]; v != "3" {
			t.Errorf("%s: web's share annotation %q, want \"3\"", c, v)
		}
		if n := nested(h, "spec", "maxReplicas"); n != 15 {
			t.Errorf("%s: maxReplicas %d, want 15", c, n)
		}
		minSum += nested(h, "spec", "minReplicas")
		if render.HashOf(h) == render.HashOf(objs[1]) {
			t.Errorf("%s: the HPA was not rehashed", c)
		}
		// Workloads that are not divided, and HPAs of them or of another group's kind, are
		// left as they are.
		for i, name := range []string{"Deployment/api", "HorizontalPodAutoscaler/api", "HorizontalPodAutoscaler/other-group"} {
			if got[name] != objs[i+2] {
				t.Errorf("%s: %s was changed", c, name)
			}
		}
	}
	if minSum != 3 {
		t.Errorf("minReplicas add up to %d over c1 and c2, want 3", minSum)
	}

	out, err := pass.Apply(objs, "c3")
	if err != nil {
		t.Fatal(err)
	}
	got := byName(out)
	if _, delivered := got["HorizontalPodAutoscaler/web"]; delivered {
		t.Error("c3 runs none of web and gets its HPA")
	}
	if d := got["Deployment/web"]; nested(d, "spec", "replicas") != 0 || d.GetAnnotations()[flotillav1.AnnotationShare] != "" {
		t.Errorf("c3's web: %v replicas, annotations %v; want 0 and no share annotation", nested(d, "spec", "replicas"), d.GetAnnotations())
	}
	if len(out) != len(objs)-1 {
		t.Errorf("%d objects on c3, want %d", len(out), len(objs)-1)
	}

	// A workload alone (transparent mode delivers each object by itself) learns from the HPAs
	// its pass was made with that it is scaled.
	alone, err := NewPass(objs, Replicas{web: {"c1": 3}}).Apply(objs[:1], "c1")
	if err != nil {
		t.Fatal(err)
	}
	if v := alone[0].GetAnnotations()[flotillav1.AnnotationShare]; v != "3" {
		t.Errorf("web alone: share annotation %q, want \"3\"", v)
	}
}
