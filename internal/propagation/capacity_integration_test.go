package propagation_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// In Capacity mode a workload's replicas follow the clusters' room for it: their Nodes'
// allocatable cpu over what one replica requests. A cluster given another Node takes more,
// and the other keeps its replicas until the first is Ready with them.
func TestCapacityModeFollowsTheClustersNodes(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	e.addNode(t, "spoke-a", "a-1", "4")
	e.addNode(t, "spoke-b", "b-1", "8")
	e.cpuOf(t, "spoke-a", "4")
	e.cpuOf(t, "spoke-b", "8")

	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "room", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeCapacity}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(12))
	web.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	e.create(t, web)
	e.propagateDeployment(t, "web", "room")
	key := client.ObjectKey{Namespace: "team", Name: "web"}
	// Room for 4 and 8 replicas of one cpu.
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 4})
	e.replicasOn(t, "web", map[string]int32{"spoke-b": 8})
	fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)

	// spoke-a gets a second Node: room for 8 and 8.
	e.addNode(t, "spoke-a", "a-2", "4")
	e.cpuOf(t, "spoke-a", "8")
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 6})
	e.replicasOn(t, "web", map[string]int32{"spoke-b": 8}) // kept until spoke-a is Ready with its 6
	fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
	e.replicasOn(t, "web", map[string]int32{"spoke-b": 6})
}

// addNode adds a Ready Node with this much allocatable cpu to a spoke.
func (e *env) addNode(t *testing.T, spoke, name, cpu string) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.spokes[spoke].Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Status = corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi"),
			corev1.ResourcePods: resource.MustParse("110")},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
	}
	if err := e.spokes[spoke].Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// cpuOf waits until the hub's Cluster shows this much allocatable cpu.
func (e *env) cpuOf(t *testing.T, cluster, want string) {
	t.Helper()
	fleettest.Eventually(t, wait, cluster+" allocatable cpu "+want, func() error {
		c := &flotillav1.Cluster{}
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: cluster}, c); err != nil {
			return err
		}
		if q := c.Status.Allocatable[corev1.ResourceCPU]; q.Cmp(resource.MustParse(want)) != 0 {
			return fmt.Errorf("allocatable cpu %s", q.String())
		}
		return nil
	})
}
