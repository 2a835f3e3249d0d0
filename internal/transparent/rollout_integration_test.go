package transparent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
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
