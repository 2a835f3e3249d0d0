package inventory

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// capacity is what the spoke's Nodes offer.
type capacity struct {
	nodes       int32
	readyNodes  int32
	allocatable corev1.ResourceList
}

// summarize counts Nodes and sums cpu, memory and pods allocatable over the Ready, schedulable
// ones: what new work could actually use.
func summarize(nodes []corev1.Node) capacity {
	c := capacity{
		nodes: int32(len(nodes)),
		allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(0, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(0, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(0, resource.DecimalSI),
		},
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.Unschedulable || !nodeReady(n) {
			continue
		}
		c.readyNodes++
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			if q, ok := n.Status.Allocatable[name]; ok {
				sum := c.allocatable[name]
				sum.Add(q)
				c.allocatable[name] = sum
			}
		}
	}
	return c
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// trimNode is the cache transform for spoke Nodes: it keeps only what summarize reads, so a
// spoke with thousands of Nodes costs the hub controller little memory.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            n.Name,
			UID:             n.UID,
			ResourceVersion: n.ResourceVersion,
			Labels:          n.Labels,
		},
		Spec: corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable},
		Status: corev1.NodeStatus{
			Allocatable: n.Status.Allocatable,
		},
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			trimmed.Status.Conditions = []corev1.NodeCondition{{Type: cond.Type, Status: cond.Status}}
		}
	}
	return trimmed, nil
}
