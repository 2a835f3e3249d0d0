package propagation

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/statusconds"
)

// TestStatusCarriesEachClustersRolloutState: each cluster's row carries its rollout state; a
// pass whose gate starts its times again (a restart) computes the status already written, so
// nothing is written; a cluster whose state changed takes the new since.
func TestStatusCarriesEachClustersRolloutState(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	later := metav1.NewTime(t0.Add(time.Hour))
	done := deliver.Result{Revision: "r2", Complete: true, Applied: 1, Ready: 1}
	progressing := func(at metav1.Time) []metav1.Condition {
		return []metav1.Condition{
			{Type: flotillav1.RolloutConditionProgressing, Status: metav1.ConditionTrue, Reason: "WaitingForApproval", Message: "m", LastTransitionTime: at},
			{Type: flotillav1.RolloutConditionComplete, Status: metav1.ConditionFalse, Reason: "WaitingForApproval", Message: "m", LastTransitionTime: at},
		}
	}
	pass := func(previous flotillav1.PropagationStatus, at metav1.Time, b flotillav1.RolloutClusterState) flotillav1.PropagationStatus {
		in := statusInput{generation: 1, selected: 1, revision: "r2", targets: []string{"a", "b"}, previous: previous,
			results: map[string]deliver.Result{"a": done, "b": done},
			rollout: &flotillav1.RolloutStatus{Revision: "v2", Phase: flotillav1.RolloutWaitingForApproval, Message: "m", Conditions: progressing(at)},
			rolloutClusters: map[string]flotillav1.ClusterRolloutState{
				"a": {Stage: "canary", State: flotillav1.RolloutClusterSucceeded, Revision: "v2", Since: at},
				"b": {Stage: "prod", State: b, Revision: "v1", Since: at},
			}}
		s := computeStatus(in)
		statusconds.PropagationWithRollout(&s.Conditions, s.ObservedGeneration, s.Rollout)
		return s
	}
	first := pass(flotillav1.PropagationStatus{}, t0, flotillav1.RolloutClusterWaitingForApproval)
	row := func(s flotillav1.PropagationStatus, c string) *flotillav1.ClusterRolloutState {
		for _, r := range s.ClusterResults {
			if r.Cluster == c {
				return r.Rollout
			}
		}
		return nil
	}
	if r := row(first, "b"); r == nil || r.State != flotillav1.RolloutClusterWaitingForApproval || r.Revision != "v1" || r.Stage != "prod" || !r.Since.Equal(&t0) {
		t.Fatalf("b's row %+v", r)
	}
	if c := meta.FindStatusCondition(first.Conditions, statusconds.Reconciling); c == nil || c.Reason != "RolloutWaitingForApproval" {
		t.Errorf("Reconciling %+v: a rollout that waits is under way", c)
	}
	again := pass(first, later, flotillav1.RolloutClusterWaitingForApproval)
	if !equality.Semantic.DeepEqual(first, again) {
		t.Fatalf("a pass that changes nothing changed the status:\n%+v\n%+v", first, again)
	}
	moved := pass(first, later, flotillav1.RolloutClusterPending)
	if r := row(moved, "b"); !r.Since.Equal(&later) {
		t.Errorf("b changed state: since %s, want %s", r.Since, later)
	}
	if r := row(moved, "a"); !r.Since.Equal(&t0) {
		t.Errorf("a did not change: since %s, want %s", r.Since, t0)
	}
}
