package propagation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// Under moves.order BreakBeforeMake a singleton moved from spoke-a to spoke-b never runs twice:
// spoke-a goes to 0 first, spoke-b stays at 0 until spoke-a is Ready with none, and only then
// gets its replica; the Moving condition says what the move waits for.
func TestBreakBeforeMakeNeverRunsASingletonTwice(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	weights := func(a, b int32) []flotillav1.ClusterReplicas {
		return []flotillav1.ClusterReplicas{{Name: "a", ClusterNames: []string{"spoke-a"}, Weight: &a}, {Name: "b", ClusterNames: []string{"spoke-b"}, Weight: &b}}
	}
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "single", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted, Clusters: weights(1, 0)},
			Moves:    &flotillav1.MovePolicy{Order: flotillav1.MoveBreakBeforeMake}}}
	e.create(t, placement)
	consumer := deployment("consumer")
	consumer.Spec.Replicas = ptr(int32(1))
	e.create(t, consumer)
	e.propagateDeployment(t, "consumer", "single")
	key := client.ObjectKey{Namespace: "team", Name: "consumer"}
	e.replicasOn(t, "consumer", map[string]int32{"spoke-a": 1, "spoke-b": 0})
	fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)

	e.updateHub(t, placement, func() { placement.Spec.Replicas.Clusters = weights(0, 1) })
	e.replicasOn(t, "consumer", map[string]int32{"spoke-a": 0})
	e.condition(t, "consumer", flotillav1.PropagationMoving, metav1.ConditionTrue, "copies on spoke-a are Ready with fewer (break before make)")
	fleettest.Consistently(t, 2*time.Second, "spoke-b waits at 0 while spoke-a has not given its replica up", func() error {
		d := &appsv1.Deployment{}
		if err := e.spokes["spoke-b"].Get(context.Background(), key, d); err != nil {
			return err
		}
		if *d.Spec.Replicas != 0 {
			return fmt.Errorf("spoke-b runs %d while spoke-a may still run its replica", *d.Spec.Replicas)
		}
		return nil
	})
	fleettest.MarkAvailable(t, e.spokes["spoke-a"], key) // its pod is gone: Ready at 0
	e.replicasOn(t, "consumer", map[string]int32{"spoke-b": 1})
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
	e.condition(t, "consumer", flotillav1.PropagationMoving, metav1.ConditionFalse, "no move under way")
}
