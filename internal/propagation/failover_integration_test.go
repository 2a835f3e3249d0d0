package propagation_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A cluster that stops answering is failed over after clusterUnhealthyAfter: its share of a
// divided workload grows on the others, and nothing of it is deleted. When it answers again
// its stranded copy is scaled down (the replacements are Ready by then), and after the
// failback window it takes its share back, the others shrinking once it is Ready.
func TestFailoverPlacesTheShareElsewhereAndTrimsTheStrandedCopy(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu", "spoke-c": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "even", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted},
			Moves: &flotillav1.MovePolicy{ClusterUnhealthyAfter: &metav1.Duration{Duration: 3 * time.Second},
				FailbackAfter: &metav1.Duration{Duration: 3 * time.Second}}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(6))
	e.create(t, web)
	e.propagateDeployment(t, "web", "even")
	key := client.ObjectKey{Namespace: "team", Name: "web"}
	state := func(spoke string, want flotillav1.DecisionState) {
		t.Helper()
		fleettest.Eventually(t, wait, fmt.Sprintf("%s %s", spoke, want), func() error {
			pl := &flotillav1.Placement{}
			if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "team", Name: "even"}, pl); err != nil {
				return err
			}
			for _, d := range pl.Status.Decisions {
				if d.ClusterName == spoke && d.State == want {
					return nil
				}
			}
			return fmt.Errorf("decisions %+v", pl.Status.Decisions)
		})
	}
	// Each copy is made available as it is until all run 2: a spoke the first division missed
	// (it was not Ready yet) holds the others at 3 until its own copy is available.
	settled := func(want map[string]int32) {
		t.Helper()
		fleettest.Eventually(t, wait, fmt.Sprintf("web divided %v and available", want), func() error {
			var off []string
			for _, s := range slices.Sorted(maps.Keys(want)) {
				d := &appsv1.Deployment{}
				if err := e.spokes[s].Get(ctx, key, d); err != nil {
					return fmt.Errorf("%s: %w", s, err)
				}
				// As a Deployment controller would: the status follows every spec change.
				if d.Status.ObservedGeneration != d.Generation || d.Status.AvailableReplicas != *d.Spec.Replicas {
					fleettest.MarkAvailable(t, e.spokes[s], key)
				}
				if *d.Spec.Replicas != want[s] {
					off = append(off, fmt.Sprintf("%s runs %d", s, *d.Spec.Replicas))
				}
			}
			if len(off) > 0 {
				return fmt.Errorf("%v", off)
			}
			return nil
		})
	}
	settled(map[string]int32{"spoke-a": 2, "spoke-b": 2, "spoke-c": 2})

	spokeC := e.fleet.Plane("spoke-c")
	spokeC.Stop()
	state("spoke-c", flotillav1.DecisionFailedOver)
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 3})
	e.replicasOn(t, "web", map[string]int32{"spoke-b": 3})
	fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
	fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)

	if err := spokeC.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Back, the stranded copy is scaled down (the replacements are Ready), not deleted.
	e.replicasOn(t, "web", map[string]int32{"spoke-c": 0})
	// After the failback window it takes its share back; the others keep 3 until it is Ready.
	state("spoke-c", "")
	e.replicasOn(t, "web", map[string]int32{"spoke-c": 2})
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 3})
	settled(map[string]int32{"spoke-a": 2, "spoke-b": 2, "spoke-c": 2})
	if n := e.countWrites(t, "spoke-c", func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" }); n != 0 {
		t.Errorf("%d deletes on the failed-over cluster, want none", n)
	}
}
