package propagation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// Replicas that stay Unschedulable on a cluster longer than moves.unschedulableAfter are
// placed elsewhere too: the other cluster grows first, the full one keeps its Pending pods until
// then, and afterwards runs what it could schedule, remembered in its record until its Nodes
// change. The spokes run no scheduler: the test plays it, marking pods Unschedulable.
func TestUnschedulableReplicasArePlacedElsewhere(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu"})
	ctx := context.Background()
	e.addNode(t, "spoke-a", "a-1", "4")
	e.cpuOf(t, "spoke-a", "4")
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "even", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted},
			Moves:    &flotillav1.MovePolicy{UnschedulableAfter: &metav1.Duration{Duration: 30 * time.Second}}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(6))
	e.create(t, web)
	e.propagateDeployment(t, "web", "even")
	key := client.ObjectKey{Namespace: "team", Name: "web"}
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 3, "spoke-b": 3})
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)

	// spoke-a schedules one of its three: two pods Pending, Unschedulable for a minute already.
	a := e.spokes["spoke-a"]
	if err := a.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "team"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-pending-%d", i), Namespace: "team", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
		if err := a.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
		if err := a.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := a.Get(ctx, key, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 2}
		return a.Status().Update(ctx, d)
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the other cluster grows first, the full one keeps its pending pods meanwhile", func(t *testing.T) {
		e.replicasOn(t, "web", map[string]int32{"spoke-b": 5})
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 3})
	})

	t.Run("once the others are Ready the full cluster runs what it scheduled, remembered in its record", func(t *testing.T) {
		fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 1})
		fleettest.Eventually(t, wait, "spoke-a's record remembers it fits 1", func() error {
			var records flotillav1.DeliveryList
			if err := e.hub.List(ctx, &records, client.InNamespace("team"), client.MatchingFields{"spec.cluster": "spoke-a"}); err != nil {
				return err
			}
			var got []string
			for _, r := range records.Items {
				for _, s := range r.Spec.Replicas {
					if s.Fits != nil && *s.Fits == 1 && r.Spec.Placed.Pods().Value() == 1 {
						return nil
					}
					fits := "none"
					if s.Fits != nil {
						fits = fmt.Sprint(*s.Fits)
					}
					got = append(got, fmt.Sprintf("%s: replicas %d, fits %s, placed %v", r.Name, s.Replicas, fits, r.Spec.Placed))
				}
			}
			return fmt.Errorf("records %v", got)
		})
	})

	t.Run("new Nodes on the full cluster make it take its share again", func(t *testing.T) {
		fleettest.MarkAvailable(t, a, key)
		e.addNode(t, "spoke-a", "a-2", "4")
		// The spoke's scheduler places the Pending pods on the new Node (the test plays it:
		// they go, so none is Unschedulable any more).
		for i := range 2 {
			if err := a.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-pending-%d", i), Namespace: "team"}}); err != nil {
				t.Fatal(err)
			}
		}
		e.cpuOf(t, "spoke-a", "8")
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 3})
		fleettest.MarkAvailable(t, a, key)
		e.replicasOn(t, "web", map[string]int32{"spoke-b": 3})
	})
}
