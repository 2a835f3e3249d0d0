package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestStates(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	withReady := func(status metav1.ConditionStatus, since time.Time) func(*flotillav1.Cluster) {
		return func(c *flotillav1.Cluster) {
			c.Status.Conditions = []metav1.Condition{{Type: flotillav1.ClusterReady, Status: status, Reason: "Probed", Message: "m",
				LastTransitionTime: metav1.NewTime(since)}}
		}
	}
	moves := func(failback flotillav1.FailbackPolicy) flotillav1.PlacementSpec {
		return flotillav1.PlacementSpec{Moves: &flotillav1.MovePolicy{ClusterUnhealthyAfter: &metav1.Duration{Duration: time.Minute},
			Failback: failback, FailbackAfter: &metav1.Duration{Duration: 10 * time.Minute}}}
	}
	was := func(s flotillav1.DecisionState, since time.Time) []flotillav1.ClusterDecision {
		at := metav1.NewTime(since)
		return []flotillav1.ClusterDecision{{ClusterName: "a", State: s, Since: &at}}
	}
	tests := []struct {
		name      string
		spec      flotillav1.PlacementSpec
		cluster   flotillav1.Cluster
		previous  []flotillav1.ClusterDecision
		now       time.Time
		rebalance bool
		want      flotillav1.DecisionState // "" is Active
		since     time.Time
		requeue   time.Duration
	}{
		{"no moves policy: health moves nothing", flotillav1.PlacementSpec{}, cluster("a", nil, withReady(metav1.ConditionUnknown, t0)), nil,
			t0.Add(time.Hour), false, "", time.Time{}, 0},
		{"not Ready for less than clusterUnhealthyAfter", moves(""), cluster("a", nil, withReady(metav1.ConditionUnknown, t0)), nil,
			t0.Add(20 * time.Second), false, "", time.Time{}, 40 * time.Second},
		{"not Ready for longer: failed over, since the threshold", moves(""), cluster("a", nil, withReady(metav1.ConditionUnknown, t0)), nil,
			t0.Add(2 * time.Minute), false, flotillav1.DecisionFailedOver, t0.Add(time.Minute), 0},
		{"failed over stays failed over, since unchanged", moves(""), cluster("a", nil, withReady(metav1.ConditionFalse, t0)),
			was(flotillav1.DecisionFailedOver, t0.Add(time.Minute)), t0.Add(time.Hour), false, flotillav1.DecisionFailedOver, t0.Add(time.Minute), 0},
		{"never probed: not Ready since created", moves(""), cluster("a", nil, func(c *flotillav1.Cluster) { c.CreationTimestamp = metav1.NewTime(t0) }), nil,
			t0.Add(2 * time.Minute), false, flotillav1.DecisionFailedOver, t0.Add(time.Minute), 0},
		{"Ready again: returning until failbackAfter", moves(flotillav1.FailbackAutomatic), cluster("a", nil, withReady(metav1.ConditionTrue, t0)),
			was(flotillav1.DecisionFailedOver, t0.Add(-time.Hour)), t0.Add(time.Minute), false, flotillav1.DecisionReturning, t0, 9 * time.Minute},
		{"Ready for failbackAfter: active", moves(""), cluster("a", nil, withReady(metav1.ConditionTrue, t0)),
			was(flotillav1.DecisionReturning, t0), t0.Add(10 * time.Minute), false, "", time.Time{}, 0},
		{"returning and not Ready again: failed over at once", moves(""), cluster("a", nil, withReady(metav1.ConditionUnknown, t0.Add(5*time.Minute))),
			was(flotillav1.DecisionReturning, t0), t0.Add(5*time.Minute + time.Second), false, flotillav1.DecisionFailedOver, t0.Add(5*time.Minute + time.Second), 0},
		{"manual failback waits for a rebalance", moves(flotillav1.FailbackManual), cluster("a", nil, withReady(metav1.ConditionTrue, t0)),
			was(flotillav1.DecisionFailedOver, t0.Add(-time.Hour)), t0.Add(time.Hour), false, flotillav1.DecisionReturning, t0, 0},
		{"manual failback at a rebalance", moves(flotillav1.FailbackManual), cluster("a", nil, withReady(metav1.ConditionTrue, t0)),
			was(flotillav1.DecisionReturning, t0), t0.Add(time.Hour), true, "", time.Time{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, requeue := States(tt.spec, []string{"a"}, []flotillav1.Cluster{tt.cluster}, tt.previous, tt.now, tt.rebalance)
			if len(got) != 1 || got[0].ClusterName != "a" || got[0].State != tt.want || requeue != tt.requeue {
				t.Fatalf("States = %+v, requeue %s; want state %q, requeue %s", got, requeue, tt.want, tt.requeue)
			}
			if tt.want == "" {
				if got[0].Since != nil || got[0].Message != "" {
					t.Fatalf("an Active decision carries since or message: %+v", got[0])
				}
				return
			}
			if got[0].Since == nil || !got[0].Since.Time.Equal(tt.since) || got[0].Message == "" {
				t.Fatalf("since %v, message %q; want since %v and a message", got[0].Since, got[0].Message, tt.since)
			}
		})
	}
}
