package propagation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/division"
)

func applied(status flotillav1.PropagationStatus) *metav1.Condition {
	return meta.FindStatusCondition(status.Conditions, flotillav1.PropagationApplied)
}

func TestComputeStatus(t *testing.T) {
	done := deliver.Result{Revision: "r2", Complete: true, Applied: 3, Ready: 3}
	tests := []struct {
		name       string
		in         statusInput
		wantReason string
		wantStatus metav1.ConditionStatus
		check      func(t *testing.T, s flotillav1.PropagationStatus)
	}{
		{name: "every cluster has the revision",
			in:         statusInput{generation: 2, selected: 3, revision: "r2", targets: []string{"a", "b"}, results: map[string]deliver.Result{"a": done, "b": done}},
			wantReason: flotillav1.ReasonApplied, wantStatus: metav1.ConditionTrue,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if r := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationReady); r == nil || r.Status != metav1.ConditionTrue {
					t.Errorf("Ready condition %+v", r)
				}
				if s.AppliedClusters != 2 || s.TargetClusters != 2 || s.SelectedObjects != 3 || s.ObservedGeneration != 2 {
					t.Errorf("counts %+v", s)
				}
			}},
		{name: "applied but not ready yet",
			in: statusInput{revision: "r2", targets: []string{"a"}, results: map[string]deliver.Result{
				"a": {Revision: "r2", Complete: true, Applied: 3, Ready: 2, NotReady: "deployment.apps ns/web: InProgress: 1 of 2 available"}}},
			wantReason: flotillav1.ReasonApplied, wantStatus: metav1.ConditionTrue,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				r := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationReady)
				if r == nil || r.Status != metav1.ConditionFalse || r.Reason != flotillav1.ReasonNotReady || !strings.Contains(r.Message, "a: deployment.apps ns/web") {
					t.Errorf("Ready condition %+v", r)
				}
				if s.ReadyClusters != 0 || s.ClusterResults[0].Ready != 2 {
					t.Errorf("counts %+v", s)
				}
			}},
		{name: "one cluster pending",
			in:         statusInput{revision: "r2", targets: []string{"a", "b"}, results: map[string]deliver.Result{"a": done}},
			wantReason: flotillav1.ReasonProgressing, wantStatus: metav1.ConditionFalse},
		{name: "a failure names the cluster",
			in: statusInput{revision: "r2", targets: []string{"a", "b"}, results: map[string]deliver.Result{"a": done,
				"b": {Revision: "r2", Failed: 1, Applied: 2, Message: "configmap ns/x: too big"}}},
			wantReason: flotillav1.ReasonApplyFailed, wantStatus: metav1.ConditionFalse,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if !strings.Contains(applied(s).Message, "b: configmap ns/x: too big") || s.FailedClusters != 1 {
					t.Errorf("condition %+v", applied(s))
				}
				if s.ClusterResults[0].Cluster != "b" {
					t.Errorf("failures are not listed first: %+v", s.ClusterResults)
				}
			}},
		{name: "a conflict wins over other failures",
			in: statusInput{revision: "r2", targets: []string{"a", "b"}, results: map[string]deliver.Result{
				"a": {Revision: "r2", Failed: 1, Message: "boom"}, "b": {Revision: "r2", Failed: 1, Conflict: true, Message: "conflict: x"}}},
			wantReason: flotillav1.ReasonConflict, wantStatus: metav1.ConditionFalse},
		{name: "no clusters", in: statusInput{revision: "r2"}, wantReason: flotillav1.ReasonNoClusters, wantStatus: metav1.ConditionFalse},
		{name: "a held placement keeps the previous counts",
			in: statusInput{previous: flotillav1.PropagationStatus{SelectedObjects: 5, AppliedClusters: 2},
				hold: &holdReason{flotillav1.ReasonPlacementNotFound, "no placement"}},
			wantReason: flotillav1.ReasonPlacementNotFound, wantStatus: metav1.ConditionFalse,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if s.SelectedObjects != 5 || s.AppliedClusters != 2 {
					t.Errorf("counts were reset: %+v", s)
				}
			}},
		{name: "after a restart, a recorded revision still holds",
			in: statusInput{revision: "r2", selected: 3, targets: []string{"a"},
				records: map[string]*flotillav1.Delivery{"a": {Status: flotillav1.DeliveryStatus{Revision: "r2", Applied: 3, Ready: 3}}}},
			wantReason: flotillav1.ReasonApplied, wantStatus: metav1.ConditionTrue,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if s.ReadyClusters != 1 || len(s.ClusterResults) != 1 || s.ClusterResults[0].Applied != 3 {
					t.Errorf("status %+v", s)
				}
			}},
		{name: "a wiped status with no record is pending, not applied",
			in: statusInput{revision: "r2", selected: 3, targets: []string{"a"},
				previous: flotillav1.PropagationStatus{ClusterResults: []flotillav1.ClusterResult{{Cluster: "a", Revision: "r2", Applied: 3}}}},
			wantReason: flotillav1.ReasonProgressing, wantStatus: metav1.ConditionFalse},
		{name: "a disconnected cluster with an old revision is pending, not failed",
			in: statusInput{revision: "r2", targets: []string{"a"}, results: map[string]deliver.Result{"a": {Revision: "r2", Disconnected: true, Message: "not connected"}},
				previous: flotillav1.PropagationStatus{ClusterResults: []flotillav1.ClusterResult{{Cluster: "a", Revision: "r1"}}}},
			wantReason: flotillav1.ReasonProgressing, wantStatus: metav1.ConditionFalse,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if s.FailedClusters != 0 || s.ClusterResults[0].Message != "not connected" {
					t.Errorf("status %+v", s)
				}
			}},
		{name: "a fight is reported with who fights, and the clusters stay applied",
			in: statusInput{revision: "r2", targets: []string{"a", "b"}, results: map[string]deliver.Result{"a": done,
				"b": {Revision: "r2", Complete: true, Applied: 3, Ready: 3, Fighting: 2, FightingObjects: []deliver.Drift{
					{Object: "configmap ns/x", Fields: []string{"/data/v"}, Manager: "rewriter (Update)", Fighting: true},
					{Object: "configmap ns/y", Deleted: true, Fighting: true}}}}},
			wantReason: flotillav1.ReasonApplied, wantStatus: metav1.ConditionTrue,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationFighting)
				if c == nil || c.Status != metav1.ConditionTrue || c.Reason != flotillav1.ReasonFighting ||
					!strings.Contains(c.Message, "2 objects on 1 clusters") ||
					!strings.Contains(c.Message, "b: configmap ns/x is changed back after every correction, at /data/v by rewriter (Update)") {
					t.Errorf("Fighting condition %+v", c)
				}
				if e := s.ClusterResults[1]; e.Cluster != "b" || e.Fighting != 2 || len(e.FightingObjects) != 2 || e.FightingObjects[0].Manager != "rewriter (Update)" {
					t.Errorf("cluster result %+v", e)
				}
				if s.Drifted != 0 {
					t.Errorf("a fight counted as drift left: %d", s.Drifted)
				}
			}},
		{name: "no fight",
			in:         statusInput{revision: "r2", targets: []string{"a"}, results: map[string]deliver.Result{"a": done}},
			wantReason: flotillav1.ReasonApplied, wantStatus: metav1.ConditionTrue,
			check: func(t *testing.T, s flotillav1.PropagationStatus) {
				if c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationFighting); c == nil || c.Status != metav1.ConditionFalse || c.Reason != flotillav1.ReasonNoFight {
					t.Errorf("Fighting condition %+v", c)
				}
			}},
		{name: "clusters leaving the placement keep it progressing",
			in: statusInput{revision: "r2", targets: []string{"a"}, results: map[string]deliver.Result{"a": done},
				dropped: map[string]deliver.Result{"old": {}}},
			wantReason: flotillav1.ReasonProgressing, wantStatus: metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := computeStatus(tt.in)
			c := applied(s)
			if c == nil || c.Reason != tt.wantReason || c.Status != tt.wantStatus {
				t.Fatalf("condition %+v, want %s/%s", c, tt.wantStatus, tt.wantReason)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestComputeStatusIsBoundedAt1000Clusters(t *testing.T) {
	in := statusInput{revision: "r", results: map[string]deliver.Result{}, rollout: &flotillav1.RolloutStatus{Revision: "r"},
		rolloutClusters: map[string]flotillav1.ClusterRolloutState{}}
	for i := range 1500 {
		c := fmt.Sprintf("cluster-%04d", i)
		in.targets = append(in.targets, c)
		in.results[c] = deliver.Result{Revision: "r", Failed: 1, Message: strings.Repeat("x", 600)}
		// A rollout's row too, its revision named as long as a long owner's would be.
		in.rolloutClusters[c] = flotillav1.ClusterRolloutState{Stage: strings.Repeat("s", 63), State: flotillav1.RolloutClusterWaitingForApproval,
			Revision: "propagation." + strings.Repeat("n", 63) + "." + strings.Repeat("h", 16), Since: metav1.Now()}
	}
	s := computeStatus(in)
	if len(s.ClusterResults) != maxClusterResults || s.FailedClusters != 1500 {
		t.Fatalf("%d entries, %d failed", len(s.ClusterResults), s.FailedClusters)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 1<<20 {
		t.Fatalf("status of a 1500-cluster fleet is %d bytes, over 1 MiB", len(data))
	}
}

func TestComputeStatusBoundsFightDetails(t *testing.T) {
	in := statusInput{revision: "r", results: map[string]deliver.Result{}}
	var fights []deliver.Drift
	for i := range 5 {
		fights = append(fights, deliver.Drift{Object: fmt.Sprintf("configmap ns/%s-%d", strings.Repeat("x", 500), i),
			Fields: []string{"/data/" + strings.Repeat("k", 250)}, Manager: strings.Repeat("m", 250), Fighting: true})
	}
	for i := range 1000 {
		c := fmt.Sprintf("cluster-%04d", i)
		in.targets = append(in.targets, c)
		in.results[c] = deliver.Result{Revision: "r", Complete: true, Applied: 5, Ready: 5, Fighting: 5, FightingObjects: fights}
	}
	s := computeStatus(in)
	detailed := 0
	for _, e := range s.ClusterResults {
		if len(e.FightingObjects) > 0 {
			detailed++
		}
		if e.Fighting != 5 {
			t.Fatalf("cluster %s counts %d fighting objects", e.Cluster, e.Fighting)
		}
	}
	if detailed != maxDriftDetailClusters {
		t.Fatalf("%d clusters describe their fights, want %d", detailed, maxDriftDetailClusters)
	}
	if c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationFighting); c == nil || !strings.HasPrefix(c.Message, "5000 objects on 1000 clusters") || utf8.RuneCountInString(c.Message) > 1024 {
		t.Fatalf("Fighting condition %+v", c)
	}
}

// A move that waits for readiness is the Applied condition's reason, with what is not Ready.
func TestMoveStalledCondition(t *testing.T) {
	in := statusInput{revision: "r1", targets: []string{"new"},
		results:     map[string]deliver.Result{"new": {Revision: "r1", Complete: true, Applied: 2, Ready: 1, NotReady: "deployment team/web: InProgress"}},
		moveStalled: "the objects stay on old until they are Ready on every chosen cluster; not Ready: new: deployment team/web: InProgress"}
	got := computeStatus(in)
	applied := meta.FindStatusCondition(got.Conditions, flotillav1.PropagationApplied)
	if applied == nil || applied.Reason != flotillav1.ReasonMoveInProgress || !strings.Contains(applied.Message, "until they are Ready") {
		t.Fatalf("Applied condition %+v, want reason MoveInProgress naming what is not Ready", applied)
	}
}

func TestReplicasPlacedCondition(t *testing.T) {
	done := deliver.Result{Revision: "r2", Complete: true, Applied: 1, Ready: 1}
	in := statusInput{generation: 3, selected: 1, revision: "r2", targets: []string{"a"}, results: map[string]deliver.Result{"a": done},
		divisions: map[string]division.Report{
			"apps/Deployment/team/web": {Reason: flotillav1.ReasonPlaced, Message: "6 replicas on 1 of 1 clusters: a=6"},
			"apps/Deployment/team/api": {Reason: flotillav1.ReasonLimitsExceeded, Message: "2 of 8 replicas unplaced: max and placement limits admit 6"},
		}}
	s := computeStatus(in)
	c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationReplicasPlaced)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != flotillav1.ReasonLimitsExceeded || c.ObservedGeneration != 3 {
		t.Fatalf("the worst workload's reason, False: %+v", c)
	}
	if !strings.Contains(c.Message, "apps/Deployment/team/api: 2 of 8 replicas unplaced") || !strings.Contains(c.Message, "team/web: 6 replicas") {
		t.Errorf("the message names every workload with its numbers: %q", c.Message)
	}

	in.divisions["apps/Deployment/team/api"] = division.Report{Reason: flotillav1.ReasonPlaced, Message: "8 replicas"}
	in.previous = s
	s = computeStatus(in)
	if c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationReplicasPlaced); c == nil || c.Status != metav1.ConditionTrue || c.Reason != flotillav1.ReasonPlaced {
		t.Errorf("every replica placed: %+v", c)
	}

	in.divisions, in.previous = nil, s
	if c := meta.FindStatusCondition(computeStatus(in).Conditions, flotillav1.PropagationReplicasPlaced); c != nil {
		t.Errorf("nothing divided: the condition goes away, got %+v", c)
	}
}

func TestMovingCondition(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	in := statusInput{generation: 1, revision: "r", targets: []string{"a"}, now: t0, progressDeadline: 10 * time.Minute,
		moveStalled: "replicas stay where they run until the copies on b are Ready (make before break)"}
	s := computeStatus(in)
	c := meta.FindStatusCondition(s.Conditions, flotillav1.PropagationMoving)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != flotillav1.ReasonMoveInProgress || !c.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("a move starts: %+v", c)
	}
	if wait := untilStalled(in); wait != 10*time.Minute {
		t.Errorf("looked at again in %s, want at the deadline", wait)
	}
	in.previous, in.now = s, t0.Add(9*time.Minute)
	if c := meta.FindStatusCondition(computeStatus(in).Conditions, flotillav1.PropagationMoving); c.Reason != flotillav1.ReasonMoveInProgress || untilStalled(in) != time.Minute {
		t.Errorf("within the deadline: %+v, %s", c, untilStalled(in))
	}
	in.now = t0.Add(10 * time.Minute)
	s = computeStatus(in)
	c = meta.FindStatusCondition(s.Conditions, flotillav1.PropagationMoving)
	if c.Reason != flotillav1.ReasonMoveStalled || !strings.Contains(c.Message, "more than 10m0s") || !isStalled(s.Conditions) {
		t.Fatalf("past the deadline, counted from when the move began: %+v", c)
	}
	in.previous, in.moveStalled = s, ""
	if c := meta.FindStatusCondition(computeStatus(in).Conditions, flotillav1.PropagationMoving); c.Status != metav1.ConditionFalse || c.Reason != flotillav1.ReasonSettled {
		t.Errorf("settled: %+v", c)
	}
}
