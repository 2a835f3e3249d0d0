package division

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
)

// A HorizontalPodAutoscaler delivered with a divided workload scales that workload on each
// cluster by itself. Delivering the hub's HPA as it is would let every cluster grow to the
// fleet's maxReplicas and keep the fleet's minReplicas each, and writing the divided
// spec.replicas back after each scaling would fight it. Instead its bounds are divided like the
// workload (DivideBounds), a cluster whose share is 0 does not get it (its minReplicas of at
// least 1 would wake a standby), and the workload's copies there carry the share annotation,
// which hands spec.replicas over to the HPA between changes of the share (package deliver).

// Bounds are an HPA's minReplicas and maxReplicas on one cluster.
type Bounds struct{ Min, Max int32 }

// DivideBounds divides an HPA's minReplicas and maxReplicas over the clusters that run some
// of its workload, in proportion to their replicas there, as the workload's replicas are
// divided (Webster, ties by a hash of seed and the cluster's name). Every such cluster gets at
// least 1 of each (an HPA scales between 1 and its maximum at the least), so the bounds add up
// to the fleet's unless there are fewer than clusters; min never exceeds max. A cluster
// running none of the workload is left out: it gets no HPA.
func DivideBounds(minReplicas, maxReplicas int32, replicas map[string]int64, seed string) map[string]Bounds {
	var cands []scheduler.Candidate
	for c, n := range replicas {
		if n > 0 {
			cands = append(cands, scheduler.Candidate{Name: c, Weight: clamp(n), Min: 1,
				Max: scheduler.Unbounded, LimitFit: scheduler.Unbounded, Estimate: scheduler.Unbounded})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	divide := func(total int32) map[string]int32 {
		return scheduler.Divide(scheduler.DivideInput{Total: max(total, 1), Mode: scheduler.ModeWeighted, Seed: seed, Clusters: cands}).Replicas
	}
	lo, hi := divide(minReplicas), divide(maxReplicas)
	out := make(map[string]Bounds, len(cands))
	for _, c := range cands {
		b := Bounds{Min: max(lo[c.Name], 1), Max: max(hi[c.Name], 1)}
		b.Min = min(b.Min, b.Max)
		out[c.Name] = b
	}
	return out
}

// autoscaler is an HPA among an owner's objects.
type autoscaler struct {
	// target is the workload its scaleTargetRef names (render.Key).
	target   string
	min, max int32
}

// ScaleTarget returns the workload an HPA of the autoscaling API (v2, or v1: the same object)
// scales, in the HPA's namespace: its kind and name. ok is false for any other object, and for
// an HPA whose scaleTargetRef does not name a kind.
func ScaleTarget(o *unstructured.Unstructured) (gvk schema.GroupVersionKind, name string, ok bool) {
	if k := o.GroupVersionKind(); k.Group != "autoscaling" || k.Kind != "HorizontalPodAutoscaler" {
		return schema.GroupVersionKind{}, "", false
	}
	ref, _, _ := unstructured.NestedStringMap(o.Object, "spec", "scaleTargetRef")
	gv, err := schema.ParseGroupVersion(ref["apiVersion"])
	if err != nil || ref["kind"] == "" || ref["name"] == "" {
		return schema.GroupVersionKind{}, "", false
	}
	return gv.WithKind(ref["kind"]), ref["name"], true
}

// autoscalerOf reads an HPA: the workload it scales and its bounds (minReplicas defaults to
// 1). ok is false for any other object.
func autoscalerOf(o *unstructured.Unstructured) (a autoscaler, ok bool) {
	gvk, name, ok := ScaleTarget(o)
	if !ok {
		return autoscaler{}, false
	}
	a = autoscaler{target: gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + name, min: 1}
	if n, found, _ := unstructured.NestedInt64(o.Object, "spec", "minReplicas"); found {
		a.min = clamp(n)
	}
	n, _, _ := unstructured.NestedInt64(o.Object, "spec", "maxReplicas")
	a.max = int32(min(max(n, 1), math.MaxInt32))
	return a, true
}

// setBounds returns a copy of an HPA with these bounds, rehashed.
func setBounds(o *unstructured.Unstructured, b Bounds) (*unstructured.Unstructured, error) {
	c := o.DeepCopy()
	if err := unstructured.SetNestedField(c.Object, int64(b.Min), "spec", "minReplicas"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(c.Object, int64(b.Max), "spec", "maxReplicas"); err != nil {
		return nil, err
	}
	return render.Rehash(c)
}
