package propagation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// An HPA delivered with a divided Deployment gets its bounds divided by the same shares, and
// the spoke's HPA owns spec.replicas between changes of the share: a spoke-side scaler draws
// no write from Flotilla, a new total is written once, and a cluster whose share falls to 0
// loses the HPA.
func TestHPAOwnsADividedWorkloadsReplicas(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu", "spoke-c": "us"})
	ctx := context.Background()
	spokes := []string{"spoke-a", "spoke-b", "spoke-c"}
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "even", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted}}}
	e.create(t, placement)
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(6))
	e.create(t, web)
	e.create(t, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr(int32(3)), MaxReplicas: 30,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}}},
		}})
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{
			ResourceSelectors: []flotillav1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"},
			},
			PlacementRef: flotillav1.PlacementRef{Name: "even"},
		}})
	key := client.ObjectKey{Namespace: "team", Name: "web"}

	t.Run("each spoke gets its share of the replicas and of the HPA's bounds", func(t *testing.T) {
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 2, "spoke-b": 2, "spoke-c": 2})
		for _, spoke := range spokes {
			e.hpaOn(t, spoke, 1, 10)
			e.shareOn(t, spoke, "2")
			fleettest.MarkAvailable(t, e.spokes[spoke], key)
		}
		e.applied(t, "web", flotillav1.ReasonApplied, 3)
	})

	t.Run("a spoke-side scaler changes the replicas and Flotilla writes nothing", func(t *testing.T) {
		since := time.Now()
		var last time.Time
		var scaled int32 = 2
		fleettest.Consistently(t, time.Minute, "Flotilla leaves spoke-a's replicas to its autoscaler", func() error {
			if time.Since(last) >= time.Second {
				// The autoscaler, once a second: by the scale subresource as an HPA does,
				// or by an update under a field manager of its own.
				scaled = scaled%9 + 3
				e.scaleOnSpoke(t, "spoke-a", scaled, scaled%2 == 0)
				fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
				last = time.Now()
			}
			if n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Name == "web" && ev.StageTimestamp.After(since)
			}); n != 0 {
				return fmt.Errorf("%d writes by Flotilla to web on spoke-a: %s", n, e.writesSince(t, "spoke-a", since))
			}
			return nil
		})
		e.replicasOn(t, "web", map[string]int32{"spoke-a": scaled})
	})

	t.Run("another change of the workload keeps the autoscaler's replicas", func(t *testing.T) {
		d := &appsv1.Deployment{}
		if err := e.spokes["spoke-a"].Get(ctx, key, d); err != nil {
			t.Fatal(err)
		}
		scaled := *d.Spec.Replicas
		e.updateHub(t, web, func() { web.Spec.Template.Spec.Containers[0].Image = "nginx:1.27" })
		e.onSpoke(t, "spoke-a", d, false, func() error {
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
				return fmt.Errorf("image %s", img)
			}
			if *d.Spec.Replicas != scaled {
				return fmt.Errorf("replicas %d, want the autoscaler's %d", *d.Spec.Replicas, scaled)
			}
			return nil
		})
		e.replicasOn(t, "web", map[string]int32{"spoke-b": 2, "spoke-c": 2})
		for _, spoke := range spokes {
			fleettest.MarkAvailable(t, e.spokes[spoke], key)
		}
	})

	t.Run("a new total is written once, as the new share", func(t *testing.T) {
		since := time.Now()
		e.updateHub(t, web, func() { web.Spec.Replicas = ptr(int32(9)) })
		e.replicasOn(t, "web", map[string]int32{"spoke-a": 3, "spoke-b": 3, "spoke-c": 3})
		for _, spoke := range spokes {
			e.shareOn(t, spoke, "3")
			if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Resource == "deployments" && ev.StageTimestamp.After(since)
			}); n != 1 {
				t.Errorf("%d writes of the Deployment on %s for one change of the total, want 1: %s", n, spoke, e.writesSince(t, spoke, since))
			}
			// 30 over 3:3:3 is 10 each, as before: the HPAs are not written.
			if n := e.countWrites(t, spoke, func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Resource == "horizontalpodautoscalers" && ev.StageTimestamp.After(since)
			}); n != 0 {
				t.Errorf("%d writes of the HPA on %s, whose bounds did not change", n, spoke)
			}
			fleettest.MarkAvailable(t, e.spokes[spoke], key)
		}
		// And the autoscaler owns the replicas again.
		since = time.Now()
		e.scaleOnSpoke(t, "spoke-b", 7, true)
		fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
		fleettest.Consistently(t, 3*time.Second, "Flotilla leaves spoke-b's replicas to its autoscaler", func() error {
			if n := e.countWrites(t, "spoke-b", func(ev localfleet.AuditEvent) bool {
				return ev.ObjectRef.Name == "web" && ev.StageTimestamp.After(since)
			}); n != 0 {
				return fmt.Errorf("%d writes by Flotilla to web on spoke-b: %s", n, e.writesSince(t, "spoke-b", since))
			}
			return nil
		})
	})

	t.Run("a cluster whose share falls to 0 loses the HPA; the others divide its bounds", func(t *testing.T) {
		e.updateHub(t, placement, func() {
			placement.Spec.Replicas.Clusters = []flotillav1.ClusterReplicas{{Name: "standby", ClusterNames: []string{"spoke-c"}, Weight: ptr(int32(0))}}
		})
		// spoke-c keeps its replicas until spoke-a and spoke-b run theirs.
		fleettest.Eventually(t, wait, "spoke-a and spoke-b given the 9 replicas", func() error {
			var sum int32
			for _, spoke := range []string{"spoke-a", "spoke-b"} {
				d := &appsv1.Deployment{}
				if err := e.spokes[spoke].Get(ctx, key, d); err != nil {
					return err
				}
				sum += *d.Spec.Replicas
			}
			if sum != 9 {
				return fmt.Errorf("%d replicas on spoke-a and spoke-b", sum)
			}
			return nil
		})
		fleettest.MarkAvailable(t, e.spokes["spoke-a"], key)
		fleettest.MarkAvailable(t, e.spokes["spoke-b"], key)
		e.replicasOn(t, "web", map[string]int32{"spoke-c": 0})
		e.onSpoke(t, "spoke-c", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, true, nil)
		e.shareOn(t, "spoke-c", "")
		fleettest.Eventually(t, wait, "the HPA's bounds divided over spoke-a and spoke-b", func() error {
			var lo, hi int32
			for _, spoke := range []string{"spoke-a", "spoke-b"} {
				h := &autoscalingv2.HorizontalPodAutoscaler{}
				if err := e.spokes[spoke].Get(ctx, key, h); err != nil {
					return err
				}
				lo, hi = lo+*h.Spec.MinReplicas, hi+h.Spec.MaxReplicas
			}
			if lo != 3 || hi != 30 {
				return fmt.Errorf("min adds up to %d, max to %d; want 3 and 30", lo, hi)
			}
			return nil
		})
	})
}

// hpaOn waits until the spoke's copy of HPA team/web has these bounds.
func (e *env) hpaOn(t *testing.T, spoke string, minReplicas, maxReplicas int32) {
	t.Helper()
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	e.onSpoke(t, spoke, h, false, func() error {
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != minReplicas || h.Spec.MaxReplicas != maxReplicas {
			return fmt.Errorf("bounds %v..%d, want %d..%d", h.Spec.MinReplicas, h.Spec.MaxReplicas, minReplicas, maxReplicas)
		}
		return nil
	})
}

// shareOn waits until the spoke's copy of Deployment team/web carries this share annotation
// ("": none).
func (e *env) shareOn(t *testing.T, spoke, share string) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	e.onSpoke(t, spoke, d, false, func() error {
		if got := d.Annotations[flotillav1.AnnotationShare]; got != share {
			return fmt.Errorf("share annotation %q, want %q", got, share)
		}
		return nil
	})
}

// scaleOnSpoke sets the replicas of Deployment team/web on a spoke as an autoscaler would:
// through the scale subresource, or by an update under a field manager of its own.
func (e *env) scaleOnSpoke(t *testing.T, spoke string, replicas int32, subresource bool) {
	t.Helper()
	c := e.spokes[spoke]
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "web"}, d); err != nil {
			return err
		}
		if subresource {
			scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", ResourceVersion: d.ResourceVersion},
				Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
			return c.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(scale))
		}
		d.Spec.Replicas = &replicas
		return c.Update(ctx, d, client.FieldOwner("test-autoscaler"))
	})
	if err != nil {
		t.Fatalf("scale web on %s to %d: %v", spoke, replicas, err)
	}
}
