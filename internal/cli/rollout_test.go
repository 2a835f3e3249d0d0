package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func rolloutHub(phase flotillav1.RolloutPhase) client.WithWatch {
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "settings"},
		Status: flotillav1.PropagationStatus{Rollout: &flotillav1.RolloutStatus{Revision: "propagation-settings-abc", Phase: phase, Message: "stage prod waits",
			Stages: []flotillav1.RolloutStageStatus{{Name: "canary", Clusters: 1, Done: 1}, {Name: "prod", Clusters: 2, Pending: 2}}}}}
	pl := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "all"},
		Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{}}}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(p, pl).Build()
}

func TestRolloutCommands(t *testing.T) {
	hub := rolloutHub(flotillav1.RolloutWaitingForApproval)
	out, err := run(t, hub, "rollout", "status", "settings", "-n", "team")
	if err != nil || !strings.Contains(out, "WaitingForApproval") || !strings.Contains(out, "prod    2") {
		t.Errorf("rollout status: error %v, output:\n%s", err, out)
	}
	out, err = run(t, hub, "rollout", "approve", "propagation/settings", "-n", "team")
	if err != nil || !strings.Contains(out, "stage prod of revision propagation-settings-abc") {
		t.Fatalf("rollout approve: error %v, output %q", err, out)
	}
	p := &flotillav1.Propagation{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil {
		t.Fatal(err)
	}
	if got := p.Annotations[flotillav1.AnnotationApprove]; got != "prod@propagation-settings-abc" {
		t.Errorf("approve wrote %q", got)
	}
	if _, err := run(t, hub, "rollout", "pause", "placement/all", "-n", "team"); err != nil {
		t.Fatal(err)
	}
	pl := &flotillav1.Placement{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil || !pl.Spec.Rollout.Paused {
		t.Errorf("pause: %v, paused %+v", err, pl.Spec.Rollout)
	}
	_, err = run(t, hub, "rollout", "pause", "all", "-n", "team")
	wantUsage(t, err, "placement/NAME")

	_, err = run(t, rolloutHub(flotillav1.RolloutHalted), "rollout", "status", "settings", "-n", "team")
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Errorf("status of a halted rollout: %v, want exit status 1", err)
	}
	_, err = run(t, rolloutHub(flotillav1.RolloutProgressing), "rollout", "approve", "settings", "-n", "team")
	if err == nil || !strings.Contains(err.Error(), "--stage") {
		t.Errorf("approve while nothing waits: %v, want a hint to name the stage", err)
	}
}
