package localfleet

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// fakeNodeAnnotation marks the Nodes that kwok animates on a full spoke.
const fakeNodeAnnotation = "kwok.x-k8s.io/node"

// prepareWorkloads makes a full spoke able to run workloads: it registers the fake Nodes (kwok
// marks them Ready and keeps their leases) and waits for the default ServiceAccount, without
// which no Pod can be admitted.
func (p *Plane) prepareWorkloads(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(p.RESTConfig())
	if err != nil {
		return err
	}
	for i := range p.spec.Nodes {
		node, err := p.fakeNode(i)
		if err != nil {
			return err
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("register fake node %s: %w", node.Name, err)
		}
	}
	if err := p.waitFor(ctx, "fake nodes Ready", workloadReadyTimeout, func(ctx context.Context) error {
		return nodesReady(ctx, cs, p.spec.Nodes)
	}); err != nil {
		return err
	}
	return p.waitFor(ctx, "default ServiceAccount", workloadReadyTimeout, func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// fakeNode returns the i-th fake Node of the spoke.
func (p *Plane) fakeNode(i int) (*corev1.Node, error) {
	c := p.spec.NodeCapacity
	cpu, err := resource.ParseQuantity(c.CPU)
	if err != nil {
		return nil, fmt.Errorf("node cpu %q: %w", c.CPU, err)
	}
	mem, err := resource.ParseQuantity(c.Memory)
	if err != nil {
		return nil, fmt.Errorf("node memory %q: %w", c.Memory, err)
	}
	name := p.spec.Name + "-node-" + strconv.Itoa(i)
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	maps.Copy(labels, p.spec.Labels)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    cpu,
		corev1.ResourceMemory: mem,
		corev1.ResourcePods:   *resource.NewQuantity(int64(c.Pods), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{fakeNodeAnnotation: "fake"},
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources,
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: KubernetesVersion + "-kwok", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}, nil
}

func nodesReady(ctx context.Context, cs kubernetes.Interface, want int) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready < want {
		return fmt.Errorf("%w: %d of %d nodes Ready", errNotReady, ready, want)
	}
	return nil
}
