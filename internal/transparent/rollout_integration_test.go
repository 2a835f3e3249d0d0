package transparent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestRolloutOfATransparentObject: the same rollout gate as a Propagation's holds a
// transparent-mode object's new revision at the first stage until the second is approved on
// the hub object itself; the Event of the wait says the approval, and approving changes no copy
// by itself (the annotation stays on the hub).
func TestRolloutOfATransparentObject(t *testing.T) {
	ctx := context.Background()
	_, c, spokes := startAudited(t, "a", "b")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: "shop", Labels: map[string]string{flotillav1.LabelPlacement: "staged"}},
		Data: map[string]string{"version": "v1"}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{
			ClusterSelector: &metav1.LabelSelector{}, Rollout: &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
				{Name: "first", ClusterNames: []string{"a"}},
				{Name: "second", ClusterNames: []string{"b"}, Approval: flotillav1.ApprovalRequired},
			}}}},
		cm,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(want map[string]string) {
		t.Helper()
		fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("the copies are %v", want), func() error {
			for cluster, v := range want {
				live := &corev1.ConfigMap{}
				if err := spokes[cluster].Get(ctx, client.ObjectKeyFromObject(cm), live); err != nil {
					return err
				}
				if live.Data["version"] != v || live.Annotations[flotillav1.AnnotationApprove] != "" {
					return fmt.Errorf("%s's copy is %s, annotations %v", cluster, live.Data["version"], live.Annotations)
				}
			}
			return nil
		})
	}
	versions(map[string]string{"a": "v1", "b": "v1"})
	edit := func(change func(*corev1.ConfigMap)) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
				return err
			}
			change(cm)
			return c.Update(ctx, cm)
		}); err != nil {
			t.Fatal(err)
		}
	}
	edit(func(cm *corev1.ConfigMap) { cm.Data["version"] = "v2" })
	versions(map[string]string{"a": "v2"})
	var approval string
	fleettest.Eventually(t, 30*time.Second, "an Event says the second stage waits for approval", func() error {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "release" && ev.Reason == "Rollout"+string(flotillav1.RolloutWaitingForApproval) {
				if i := strings.Index(ev.Message, flotillav1.AnnotationApprove+"="); i >= 0 {
					approval = strings.Fields(ev.Message[i+len(flotillav1.AnnotationApprove)+1:])[0]
					return nil
				}
			}
		}
		return fmt.Errorf("no such Event among %d", len(events.Items))
	})
	versions(map[string]string{"b": "v1"})
	if !strings.HasPrefix(approval, "second@") {
		t.Fatalf("the Event asks for approval %q, want second@<revision>", approval)
	}
	edit(func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{flotillav1.AnnotationApprove: approval} })
	versions(map[string]string{"a": "v2", "b": "v2"})
	// Each stage said when it started and completed, on the hub object.
	revision := strings.TrimPrefix(approval, "second@")
	fleettest.Eventually(t, 30*time.Second, "Events say each stage started and completed", func() error {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
			return err
		}
		want := map[string]bool{"RolloutStageStarted/stage first started revision " + revision: false, "RolloutStageComplete/stage first completed revision " + revision: false,
			"RolloutStageStarted/stage second started revision " + revision: false, "RolloutStageComplete/stage second completed revision " + revision: false}
		for _, ev := range events.Items {
			for w := range want {
				if reason, msg, _ := strings.Cut(w, "/"); ev.InvolvedObject.Name == "release" && ev.Reason == reason && strings.HasPrefix(ev.Message, msg) {
					want[w] = true
				}
			}
		}
		for w, seen := range want {
			if !seen {
				return fmt.Errorf("no Event %s", w)
			}
		}
		return nil
	})
}

// TestRolloutOfATransparentDeployment: a hub Deployment's new template rolls out stage by
// stage. Paused on the hub (spec.paused, as kubectl rollout pause sets it) the rollout reaches
// no cluster; resumed, it reaches the first stage, and the held cluster keeps the old template
// until the second stage is approved (its audit log: no write before). The hub Deployment's
// status is what kubectl rollout status reads: updatedReplicas counts only the replicas of the
// clusters the rollout reached.
func TestRolloutOfATransparentDeployment(t *testing.T) {
	ctx := context.Background()
	fleet, c, spokes := startAudited(t, "a", "b")
	start := time.Now()
	web := deployment("web", 2, map[string]string{flotillav1.LabelPlacement: "staged"})
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{
			ClusterSelector: &metav1.LabelSelector{}, Rollout: &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
				{Name: "first", ClusterNames: []string{"a"}},
				{Name: "second", ClusterNames: []string{"b"}, Approval: flotillav1.ApprovalRequired},
			}}}},
		web,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	key := client.ObjectKeyFromObject(web)
	// images waits until each cluster's copy has the image, and plays its Deployment
	// controller: the copy is Available at its generation.
	images := func(want map[string]string) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("the copies run %v", want), func() error {
			for cluster, image := range want {
				d := &appsv1.Deployment{}
				if err := spokes[cluster].Get(ctx, key, d); err != nil {
					return err
				}
				if got := d.Spec.Template.Spec.Containers[0].Image; got != image || d.Spec.Paused {
					return fmt.Errorf("%s's copy runs %s, paused %t", cluster, got, d.Spec.Paused)
				}
			}
			return nil
		})
		for cluster := range want {
			fleettest.MarkAvailable(t, spokes[cluster], key)
		}
	}
	// hubStatus waits until the hub Deployment's status counts these replicas.
	hubStatus := func(replicas, updated int32) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("the hub counts %d replicas, %d updated", replicas, updated), func() error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, key, d); err != nil {
				return err
			}
			if s := d.Status; s.Replicas != replicas || s.UpdatedReplicas != updated || s.ObservedGeneration != d.Generation {
				return fmt.Errorf("status %+v, generation %d", s, d.Generation)
			}
			return nil
		})
	}
	event := func(phase flotillav1.RolloutPhase) string {
		t.Helper()
		var msg string
		fleettest.Eventually(t, 30*time.Second, "an Event says the rollout is "+string(phase), func() error {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Name == "web" && ev.Reason == "Rollout"+string(phase) {
					msg = ev.Message
					return nil
				}
			}
			return fmt.Errorf("no such Event among %d", len(events.Items))
		})
		return msg
	}
	edit := func(change func(*appsv1.Deployment)) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, key, d); err != nil {
				return err
			}
			change(d)
			return c.Update(ctx, d)
		}); err != nil {
			t.Fatal(err)
		}
	}
	images(map[string]string{"a": "nginx", "b": "nginx"})
	hubStatus(2, 2)
	if n := deploymentWrites(t, fleet, "b", start); n == 0 {
		t.Fatal("b's audit log shows no write of the copy by Flotilla, not even its first delivery")
	}

	// Paused on the hub, the new template reaches no cluster.
	edit(func(d *appsv1.Deployment) { d.Spec.Paused = true })
	changed := time.Now()
	edit(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	event(flotillav1.RolloutPaused)
	images(map[string]string{"a": "nginx", "b": "nginx"})
	for _, cluster := range []string{"a", "b"} {
		if n := deploymentWrites(t, fleet, cluster, changed); n != 0 {
			t.Errorf("%s's copy written %d times while the rollout was paused", cluster, n)
		}
	}

	// Resumed: the first stage gets it, the second waits for approval with the old template.
	edit(func(d *appsv1.Deployment) { d.Spec.Paused = false })
	images(map[string]string{"a": "nginx:2"})
	waiting := event(flotillav1.RolloutWaitingForApproval)
	hubStatus(2, 1)
	images(map[string]string{"b": "nginx"})
	if n := deploymentWrites(t, fleet, "b", changed); n != 0 {
		t.Errorf("b's copy written %d times before the approval", n)
	}
	i := strings.Index(waiting, flotillav1.AnnotationApprove+"=")
	if i < 0 {
		t.Fatalf("the Event %q does not say the approval", waiting)
	}
	approval := strings.Fields(waiting[i+len(flotillav1.AnnotationApprove)+1:])[0]
	edit(func(d *appsv1.Deployment) { d.Annotations = map[string]string{flotillav1.AnnotationApprove: approval} })
	images(map[string]string{"a": "nginx:2", "b": "nginx:2"})
	hubStatus(2, 2)
	event(flotillav1.RolloutComplete)
}

// deploymentWrites counts Flotilla's writes of Deployment shop/web on a spoke since a time
// (its audit log).
func deploymentWrites(t *testing.T, fleet *localfleet.Fleet, plane string, since time.Time) int {
	t.Helper()
	events, err := fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == "deployments" && ev.ObjectRef.Name == "web" &&
			!strings.Contains(ev.RequestURI, "dryRun=") && !strings.Contains(ev.RequestURI, "/status") && ev.StageTimestamp.After(since) {
			n++
		}
	}
	return n
}
