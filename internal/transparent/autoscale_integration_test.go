package transparent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestTransparentHPA: a Deployment and the HPA that scales it, labelled for the same
// Placement, are divided together although each is delivered by itself: the HPA's bounds by
// the Deployment's shares, the HPA only where the Deployment has a share, and the spoke's HPA
// owns the replicas between changes of the share.
func TestTransparentHPA(t *testing.T) {
	ctx := context.Background()
	fleet, c, spokes := startAudited(t, "a", "b")
	placed := map[string]string{flotillav1.LabelPlacement: "all"}
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}}
	web := deployment("web", 4, placed)
	minReplicas := int32(2)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		placement,
		web,
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: placed},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    &minReplicas, MaxReplicas: 10}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	key := client.ObjectKey{Namespace: "shop", Name: "web"}
	// on waits until a spoke's Deployment has these replicas and share annotation, and its
	// HPA these bounds (maxReplicas 0: no HPA).
	on := func(spoke string, replicas int32, share string, minReplicas, maxReplicas int32) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("web on %s", spoke), func() error {
			d := &appsv1.Deployment{}
			if err := spokes[spoke].Get(ctx, key, d); err != nil {
				return err
			}
			if *d.Spec.Replicas != replicas || d.Annotations[flotillav1.AnnotationShare] != share {
				return fmt.Errorf("replicas %d, share %q; want %d, %q", *d.Spec.Replicas, d.Annotations[flotillav1.AnnotationShare], replicas, share)
			}
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			err := spokes[spoke].Get(ctx, key, h)
			switch {
			case maxReplicas == 0 && apierrors.IsNotFound(err):
				return nil
			case maxReplicas == 0:
				return fmt.Errorf("an HPA (%v)", err)
			case err != nil:
				return err
			case *h.Spec.MinReplicas != minReplicas || h.Spec.MaxReplicas != maxReplicas:
				return fmt.Errorf("HPA bounds %d..%d, want %d..%d", *h.Spec.MinReplicas, h.Spec.MaxReplicas, minReplicas, maxReplicas)
			}
			return nil
		})
	}
	writes := func(spoke, resource string, since time.Time) []string {
		t.Helper()
		events, err := fleet.Plane(spoke).AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range events {
			if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == "web" && ev.StageTimestamp.After(since) {
				out = append(out, ev.Verb+" "+ev.RequestURI)
			}
		}
		return out
	}
	scale := func(spoke string, replicas int32) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := &appsv1.Deployment{}
			if err := spokes[spoke].Get(ctx, key, d); err != nil {
				return err
			}
			s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", ResourceVersion: d.ResourceVersion},
				Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
			return spokes[spoke].SubResource("scale").Update(ctx, d, client.WithSubResourceBody(s))
		})
		if err != nil {
			t.Fatalf("scale web on %s: %v", spoke, err)
		}
		fleettest.MarkAvailable(t, spokes[spoke], key)
	}

	t.Run("the HPA's bounds are divided like the Deployment", func(t *testing.T) {
		on("a", 2, "2", 1, 5)
		on("b", 2, "2", 1, 5)
		fleettest.MarkAvailable(t, spokes["a"], key)
		fleettest.MarkAvailable(t, spokes["b"], key)
	})

	t.Run("the spoke's autoscaler owns the replicas", func(t *testing.T) {
		since := time.Now()
		var last time.Time
		replicas := int32(2)
		fleettest.Consistently(t, 10*time.Second, "no write by Flotilla to web on a", func() error {
			if time.Since(last) >= time.Second {
				replicas = replicas%7 + 2
				scale("a", replicas)
				last = time.Now()
			}
			if w := append(writes("a", "deployments", since), writes("a", "horizontalpodautoscalers", since)...); len(w) > 0 {
				return fmt.Errorf("%d writes: %s", len(w), strings.Join(w, "; "))
			}
			return nil
		})
	})

	t.Run("a new total is written once", func(t *testing.T) {
		since := time.Now()
		fleettest.Eventually(t, 10*time.Second, "web scaled to 6 on the hub", func() error {
			if err := c.Get(ctx, key, web); err != nil {
				return err
			}
			web.Spec.Replicas = ptr(int32(6))
			return c.Update(ctx, web)
		})
		for _, spoke := range []string{"a", "b"} {
			on(spoke, 3, "3", 1, 5)
			if w := writes(spoke, "deployments", since); len(w) != 1 {
				t.Errorf("%d writes of web on %s, want 1: %s", len(w), spoke, strings.Join(w, "; "))
			}
			fleettest.MarkAvailable(t, spokes[spoke], key)
		}
	})

	t.Run("a cluster whose share falls to 0 loses the HPA", func(t *testing.T) {
		fleettest.Eventually(t, 10*time.Second, "b made a standby", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(placement), placement); err != nil {
				return err
			}
			placement.Spec.Replicas = &flotillav1.ReplicaPolicy{Clusters: []flotillav1.ClusterReplicas{{Name: "standby", ClusterNames: []string{"b"}, Weight: ptr(int32(0))}}}
			return c.Update(ctx, placement)
		})
		fleettest.Eventually(t, 30*time.Second, "web on a at 6", func() error {
			d := &appsv1.Deployment{}
			if err := spokes["a"].Get(ctx, key, d); err != nil {
				return err
			}
			if *d.Spec.Replicas != 6 {
				return fmt.Errorf("replicas %d", *d.Spec.Replicas)
			}
			return nil
		})
		fleettest.MarkAvailable(t, spokes["a"], key)
		on("a", 6, "6", 2, 10)
		on("b", 0, "", 0, 0)
	})
}

func ptr[T any](v T) *T { return &v }
