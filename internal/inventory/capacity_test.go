package inventory

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, ready, unschedulable bool, cpu, mem string, pods int64) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse(mem),
				corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
			},
		},
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name                       string
		nodes                      []corev1.Node
		wantNodes, wantReady       int32
		wantCPU, wantMem, wantPods string
	}{
		{name: "no nodes", wantCPU: "0", wantMem: "0", wantPods: "0"},
		{name: "ready nodes sum", nodes: []corev1.Node{node("a", true, false, "4", "16Gi", 110), node("b", true, false, "500m", "1Gi", 10)},
			wantNodes: 2, wantReady: 2, wantCPU: "4500m", wantMem: "17Gi", wantPods: "120"},
		{name: "not ready and cordoned nodes are counted but add no capacity",
			nodes:     []corev1.Node{node("a", true, false, "4", "16Gi", 110), node("b", false, false, "4", "16Gi", 110), node("c", true, true, "4", "16Gi", 110)},
			wantNodes: 3, wantReady: 1, wantCPU: "4", wantMem: "16Gi", wantPods: "110"},
		{name: "node without a Ready condition is not ready", nodes: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "x"}}},
			wantNodes: 1, wantReady: 0, wantCPU: "0", wantMem: "0", wantPods: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(tt.nodes)
			cpu, mem, pods := got.allocatable[corev1.ResourceCPU], got.allocatable[corev1.ResourceMemory], got.allocatable[corev1.ResourcePods]
			if got.nodes != tt.wantNodes || got.readyNodes != tt.wantReady ||
				cpu.Cmp(resource.MustParse(tt.wantCPU)) != 0 || mem.Cmp(resource.MustParse(tt.wantMem)) != 0 || pods.Cmp(resource.MustParse(tt.wantPods)) != 0 {
				t.Fatalf("got nodes=%d ready=%d cpu=%s mem=%s pods=%s", got.nodes, got.readyNodes, cpu.String(), mem.String(), pods.String())
			}
		})
	}
}

func TestTrimNodeKeepsWhatSummarizeReads(t *testing.T) {
	n := node("a", true, true, "2", "4Gi", 10)
	n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"big"}}}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse})
	out, err := trimNode(&n)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := out.(*corev1.Node)
	if trimmed.ManagedFields != nil || trimmed.Status.Images != nil || len(trimmed.Status.Conditions) != 1 {
		t.Fatalf("not trimmed: %+v", trimmed)
	}
	before, after := summarize([]corev1.Node{n}), summarize([]corev1.Node{*trimmed})
	if before.readyNodes != after.readyNodes || before.nodes != after.nodes {
		t.Fatalf("trimming changed the summary: %+v vs %+v", before, after)
	}
}
