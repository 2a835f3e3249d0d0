package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// A Placement that divides replicas divides the workloads of the Propagations using it: by
// weight, within each cluster's maximum, sticky when the total grows, and a cluster that is to
// run fewer keeps its replicas until the clusters that gain are Ready.
func TestPlacementDividesAPropagationsWorkloads(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu", "spoke-c": "us"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	group := func(name string, weight int32, max string) flotillav1.ClusterReplicas {
		g := flotillav1.ClusterReplicas{Name: name, ClusterNames: []string{"spoke-" + name}, Weight: &weight}
		if max != "" {
			m := intstr.Parse(max)
			g.Max = &m
		}
		return g
	}
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "weighted", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted,
				Clusters: []flotillav1.ClusterReplicas{group("a", 1, ""), group("b", 2, ""), group("c", 3, "50%")}}}}
	e.create(t, placement)
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(12))
	e.create(t, web)
	e.propagateDeployment(t, "web", "weighted")
	key := client.ObjectKey{Namespace: "team", Name: "web"}

	t.Run("weights 1:2:3 divide 12 replicas 2, 4 and 6", func(t *testing.T) {
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 2, "spoke-b": 4, "spoke-c": 6})
		// The division is kept in the records.
		fleettest.Eventually(t, wait, "shares recorded", func() error {
			var records flotillav1.DeliveryList
			if err := e.hub.List(ctx, &records, client.InNamespace("team")); err != nil {
				return err
			}
			got := map[string]int32{}
			for _, r := range records.Items {
				for _, s := range r.Spec.Replicas {
					got[r.Spec.Cluster] = s.Replicas
				}
			}
			if got["spoke-a"] != 2 || got["spoke-b"] != 4 || got["spoke-c"] != 6 {
				return fmt.Errorf("recorded shares %v", got)
			}
			return nil
		})
		for _, spoke := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			fleettest.MarkAvailable(t, e.spokes[spoke], key)
		}
	})

	t.Run("a higher total adds replicas and takes none away", func(t *testing.T) {
		since := time.Now()
		e.updateHub(t, web, func() { web.Spec.Replicas = ptr(int32(18)) })
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 3, "spoke-b": 6, "spoke-c": 9})
		for _, spoke := range []string{"spoke-a", "spoke-b", "spoke-c"} {
			if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Resource == "deployments" && ev.StageTimestamp.After(since)
			}); n != 1 {
				t.Errorf("%d writes of the Deployment on %s for one change of the total, want 1", n, spoke)
			}
			fleettest.MarkAvailable(t, e.spokes[spoke], key)
		}
	})

	t.Run("a cluster that is to run fewer keeps its replicas until the others are Ready", func(t *testing.T) {
		// spoke-c may now run 20% (4 of 18): the 5 it gives up go to spoke-a and spoke-b.
		e.updateHub(t, placement, func() { placement.Spec.Replicas.Clusters[2] = group("c", 3, "20%") })
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 5, "spoke-b": 9})
		e.condition(t, "web", flotillav1.PropagationApplied, metav1.ConditionFalse, "until the copies on spoke-a, spoke-b are Ready")
		since := time.Now()
		fleettest.Consistently(t, 2*time.Second, "spoke-c keeps its 9 replicas", func() error {
			if n := e.countWrites(t, "spoke-c", func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Resource == "deployments" && ev.StageTimestamp.After(since)
			}); n != 0 {
				return fmt.Errorf("%d writes of the Deployment on spoke-c", n)
			}
			return nil
		})
		e.replicasOn(t, "web", map[string]int32{"spoke-c": 9})
		fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
		fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
		e.replicasOn(t, "web", map[string]int32{"spoke-c": 4})
		fleettest.MarkAvailable(t, e.spokes["spoke-c"], key)
		e.applied(t, "web", flotillav1.ReasonApplied, 3)
	})

	t.Run("the API refuses a minimum above the maximum and a malformed percentage", func(t *testing.T) {
		for _, bad := range []struct {
			min, max intstr.IntOrString
			message  string
		}{
			{intstr.FromInt32(5), intstr.FromInt32(2), "min must not exceed max"},
			{intstr.FromInt32(0), intstr.FromString("50"), "should match"},
		} {
			p := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "team"},
				Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Replicas: &flotillav1.ReplicaPolicy{
					Clusters: []flotillav1.ClusterReplicas{{Name: "all", ClusterSelector: &metav1.LabelSelector{}, Min: &bad.min, Max: &bad.max}}}}}
			err := e.hub.Create(ctx, p)
			if err == nil || !strings.Contains(err.Error(), bad.message) {
				t.Errorf("min %s, max %s: %v, want an error saying %q", bad.min.String(), bad.max.String(), err, bad.message)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// replicasOn waits until each spoke's copy of Deployment team/name asks for these replicas.
func (e *env) replicasOn(t *testing.T, name string, want map[string]int32) {
	t.Helper()
	for spoke, n := range want {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}
		e.onSpoke(t, spoke, d, false, func() error {
			if *d.Spec.Replicas != n {
				return fmt.Errorf("spec.replicas %d, want %d", *d.Spec.Replicas, n)
			}
			return nil
		})
	}
}

// propagateDeployment creates Propagation team/name delivering Deployment team/name through
// the Placement named placement.
func (e *env) propagateDeployment(t *testing.T, name, placement string) {
	t.Helper()
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: flotillav1.PropagationSpec{
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			PlacementRef:      flotillav1.PlacementRef{Name: placement},
		}})
}
