package division

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Usage is what replicas request together, in the units of Room: "cpu" in millicores,
// "memory" in bytes, "pods".
type Usage map[string]int64

// UsageOf returns what the workloads among one cluster's objects request there: each apps/v1
// workload's spec.replicas times what one of its replicas requests, and one pod per replica. A
// workload an HPA among objs scales counts the HPA's maxReplicas when that is more: the room it
// may scale into without Flotilla acting is not another owner's to take.
func UsageOf(objs []*unstructured.Unstructured) Usage {
	out := Usage{}
	requests := Requests(objs)
	scaledTo := map[string]int64{}
	for _, o := range objs {
		if a, ok := autoscalerOf(o); ok {
			scaledTo[a.target] = max(scaledTo[a.target], int64(a.max))
		}
	}
	for key, replicas := range Workloads(objs) {
		replicas = max(replicas, scaledTo[key])
		if replicas <= 0 {
			continue
		}
		out["pods"] += replicas
		for res, n := range requests[key] {
			out[res] += replicas * n
		}
	}
	return out
}

// Add adds u to a usage made on demand.
func (a Usage) Add(u Usage) Usage {
	if a == nil {
		a = Usage{}
	}
	for res, n := range u {
		a[res] += n
	}
	return a
}

// ResourceList is the usage as the API writes it; nil when empty.
func (a Usage) ResourceList() corev1.ResourceList {
	if len(a) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for res, n := range a {
		out[corev1.ResourceName(res)] = quantityOf(res, n)
	}
	return out
}

// UsageFrom reads a resource list (placement limits, a record's placed) in the units of Usage;
// resources other than cpu, memory and pods are left out, since no replica's request names them.
func UsageFrom(list corev1.ResourceList) Usage {
	if len(list) == 0 {
		return nil
	}
	out := Usage{}
	if q, ok := list[corev1.ResourceCPU]; ok {
		out["cpu"] = q.MilliValue()
	}
	if q, ok := list[corev1.ResourceMemory]; ok {
		out["memory"] = q.Value()
	}
	if q, ok := list[corev1.ResourcePods]; ok {
		out["pods"] = q.Value()
	}
	return out
}

// Free is what limits admit beside what others placed: limits minus others, resource by
// resource (negative when a limit was lowered below what is placed). Only the limited
// resources are in it; nil limits admit everything (nil).
func Free(limits, others Usage) Usage {
	if len(limits) == 0 {
		return nil
	}
	out := Usage{}
	for res, n := range limits {
		out[res] = n - others[res]
	}
	return out
}

// sortedKeys returns a map's keys in order: workloads are divided in a fixed order, so that
// what one takes of a cluster's free room does not depend on map order.
func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// quantityOf writes one resource of a usage as a quantity: cpu in millicores, memory in
// binary units, pods as a count.
func quantityOf(res string, n int64) resource.Quantity {
	switch res {
	case "cpu":
		return *resource.NewMilliQuantity(n, resource.DecimalSI)
	case "memory":
		return *resource.NewQuantity(n, resource.BinarySI)
	default:
		return *resource.NewQuantity(n, resource.DecimalSI)
	}
}

// take subtracts what replicas of a workload requesting request use (one pod each).
func (a Usage) take(replicas int64, request map[string]int64) {
	if _, limited := a["pods"]; limited {
		a["pods"] -= replicas
	}
	for res, n := range request {
		if _, limited := a[res]; limited {
			a[res] -= replicas * n
		}
	}
}
