package cli

import (
	"context"
	"errors"
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
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestRolloutCommandsOfATransparentDeployment steers a hub Deployment's fleet rollout with
// flotilla rollout alone, on real API servers: status --watch follows its Events until the
// rollout completes (exit 0), approve lets the waiting stage start, history lists the kept
// revisions, undo returns every cluster to the first template, and status then exits 1.
func TestRolloutCommandsOfATransparentDeployment(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("a"), fleettest.APIOnlySpoke("b"))
	ctx := context.Background()
	hub := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokes := map[string]client.Client{}
	for _, name := range []string{"a", "b"} {
		cfg := fleet.Plane(name).RESTConfig()
		if err := membership.Join(ctx, hub, membership.JoinOptions{Name: name, Spoke: cfg}); err != nil {
			t.Fatal(err)
		}
		var err error
		if spokes[name], err = client.New(cfg, client.Options{Scheme: install.Scheme()}); err != nil {
			t.Fatal(err)
		}
	}
	replicas := int32(2)
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{flotillav1.LabelPlacement: "staged"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	for _, obj := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{
			ClusterSelector: &metav1.LabelSelector{}, Rollout: &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
				{Name: "first", ClusterNames: []string{"a"}},
				{Name: "second", ClusterNames: []string{"b"}, Approval: flotillav1.ApprovalRequired}}}}},
		web} {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	key := client.ObjectKeyFromObject(web)
	// images waits until the copies run the images, and plays their Deployment controller.
	images := func(want map[string]string) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("the copies run %v", want), func() error {
			for cluster, image := range want {
				d := &appsv1.Deployment{}
				if err := spokes[cluster].Get(ctx, key, d); err != nil {
					return err
				}
				if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
					return fmt.Errorf("%s runs %s", cluster, got)
				}
			}
			return nil
		})
		for cluster := range want {
			fleettest.MarkAvailable(t, spokes[cluster], key)
		}
	}
	cli := func(ctx context.Context, out *syncBuffer, args ...string) error {
		cmd := NewRootCommand()
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SetArgs(append(args, "--hub-kubeconfig", fleet.Hub().KubeconfigPath()))
		return cmd.ExecuteContext(ctx)
	}
	images(map[string]string{"a": "nginx", "b": "nginx"})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(ctx, key, d); err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		return hub.Update(ctx, d)
	}); err != nil {
		t.Fatal(err)
	}
	images(map[string]string{"a": "nginx:2"})

	watchCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var watched syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- cli(watchCtx, &watched, "rollout", "status", "deployment/web", "-n", "shop", "--watch")
	}()
	waitFor(t, &watched, "WaitingForApproval: stage second waits for approval", 1)
	images(map[string]string{"b": "nginx"})

	var out syncBuffer
	if err := cli(ctx, &out, "rollout", "approve", "deployment/web", "-n", "shop"); err != nil || !strings.Contains(out.String(), "approved: stage second") {
		t.Fatalf("approve: %v, %s", err, out.String())
	}
	images(map[string]string{"a": "nginx:2", "b": "nginx:2"})
	select {
	case err := <-done:
		if err != nil || !strings.Contains(watched.String(), "Complete") {
			t.Errorf("status --watch ended with %v, want exit 0 once Complete; output:\n%s", err, watched.String())
		}
	case <-watchCtx.Done():
		t.Fatalf("status --watch did not end when the rollout completed:\n%s", watched.String())
	}

	out = syncBuffer{}
	if err := cli(ctx, &out, "rollout", "history", "deployment/web", "-n", "shop"); err != nil || !strings.Contains(out.String(), "latest (Complete)") ||
		strings.Count(out.String(), "\n") != 3 {
		t.Errorf("history: %v, want two revisions, the latest Complete:\n%s", err, out.String())
	}
	out = syncBuffer{}
	if err := cli(ctx, &out, "rollout", "undo", "deployment/web", "-n", "shop"); err != nil || !strings.Contains(out.String(), "rolled back") {
		t.Fatalf("undo: %v, %s", err, out.String())
	}
	images(map[string]string{"a": "nginx", "b": "nginx"})
	fleettest.Eventually(t, 30*time.Second, "status says the rollout was undone (exit 1)", func() error {
		out := syncBuffer{}
		err := cli(ctx, &out, "rollout", "status", "deployment/web", "-n", "shop")
		var exit ExitError
		if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out.String(), "RolledBack") {
			return fmt.Errorf("status: %v, output:\n%s", err, out.String())
		}
		return nil
	})
}
