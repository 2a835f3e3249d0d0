package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func rolloutHub(phase flotillav1.RolloutPhase) client.WithWatch {
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "settings"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"}},
		Status: flotillav1.PropagationStatus{Rollout: &flotillav1.RolloutStatus{Revision: "propagation-settings-abc", Phase: phase, Message: "stage prod waits",
			Stages: []flotillav1.RolloutStageStatus{{Name: "canary", State: flotillav1.RolloutClusterSucceeded, Clusters: 1, Done: 1},
				{Name: "prod", State: flotillav1.RolloutClusterWaitingForApproval, Clusters: 2, Pending: 2}}},
			ClusterResults: []flotillav1.ClusterResult{{Cluster: "eu-1", Rollout: &flotillav1.ClusterRolloutState{Stage: "prod",
				State: flotillav1.RolloutClusterWaitingForApproval, Revision: "propagation-settings-old", Since: metav1.NewTime(time.Date(2026, 11, 27, 12, 1, 5, 0, time.UTC))}}}}}
	pl := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "all"},
		Spec: flotillav1.PlacementSpec{Rollout: &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{{Name: "canary"},
			{Name: "prod", Approval: flotillav1.ApprovalRequired}}}}}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(p, pl).Build()
}

func TestRolloutCommands(t *testing.T) {
	hub := rolloutHub(flotillav1.RolloutWaitingForApproval)
	out, err := run(t, hub, "rollout", "status", "settings", "-n", "team")
	if err != nil || !strings.Contains(out, "WaitingForApproval") || !strings.Contains(out, "prod    WaitingForApproval  2") ||
		!strings.Contains(out, "eu-1     prod   WaitingForApproval  propagation-settings-old  2026-11-27T12:01:05Z") {
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
	// A bare NAME is a Propagation's: resuming it resumes its Placement.
	if out, err := run(t, hub, "rollout", "resume", "settings", "-n", "team"); err != nil || !strings.Contains(out, "every owner using it") {
		t.Fatalf("resume of a Propagation: %v, %q", err, out)
	}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "all"}, pl); err != nil || pl.Spec.Rollout.Paused {
		t.Errorf("resume: %v, paused %+v", err, pl.Spec.Rollout)
	}
	_, err = run(t, hub, "rollout", "pause", "all", "-n", "team")
	wantError(t, err, "propagation all not found")
	_, err = run(t, hub, "rollout", "status", "placement/all", "-n", "team")
	wantUsage(t, err, "pause it with flotilla rollout pause placement/all")

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

func TestRolloutUndoAndHistory(t *testing.T) {
	hub := rolloutHub(flotillav1.RolloutHalted)
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "settings"}
	for n, name := range []string{"propagation-settings-old", "propagation-settings-prev", "propagation-settings-abc"} {
		rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name,
			Labels:      map[string]string{flotillav1.LabelOwner: owner.LabelValue()},
			Annotations: map[string]string{"flotilla.dev/revision-number": fmt.Sprint(n + 1)}}, Revision: int64(n + 1)}
		if err := hub.Create(context.Background(), rev); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, hub, "rollout", "history", "settings", "-n", "team")
	if err != nil || !strings.Contains(out, "3         propagation-settings-abc   0         latest (Halted)") {
		t.Errorf("rollout history: error %v, output:\n%s", err, out)
	}
	for _, tc := range []struct {
		args      []string
		want, err string
	}{
		{args: []string{"--to-revision", "3"}, err: "is the one rolling out"},
		{args: []string{"--to-revision", "9"}, err: "revision 9 is not kept"},
		{args: []string{"--to-revision", "1"}, want: "propagation-settings-old@propagation-settings-abc"},
		{want: "propagation-settings-prev@propagation-settings-abc"},
	} {
		_, err := run(t, hub, append([]string{"rollout", "undo", "settings", "-n", "team"}, tc.args...)...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "flotilla rollout history") {
				t.Errorf("undo %v: %v, want an error saying %q and where to look", tc.args, err, tc.err)
			}
			continue
		}
		p := &flotillav1.Propagation{}
		if err2 := hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "settings"}, p); err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if got := p.Annotations[flotillav1.AnnotationUndo]; got != tc.want {
			t.Errorf("undo %v wrote %q, want %q", tc.args, got, tc.want)
		}
	}
	_, err = run(t, rolloutHub(flotillav1.RolloutRolledBack), "rollout", "status", "settings", "-n", "team")
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Errorf("status of a rollout undone: %v, want exit status 1", err)
	}
}
