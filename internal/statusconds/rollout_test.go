package statusconds

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TestRolloutDrivesReconcilingAndStalled: a Propagation whose delivery is done is Reconciling
// while its rollout moves or waits, Stalled while it is halted (over a delivery's own
// Reconciling too), and neither once it is complete, paused or undone; a delivery's own
// Stalled is kept while the rollout moves.
func TestRolloutDrivesReconcilingAndStalled(t *testing.T) {
	applied := cond(flotillav1.PropagationApplied, metav1.ConditionTrue, flotillav1.ReasonApplied)
	ready := cond(flotillav1.PropagationReady, metav1.ConditionTrue, flotillav1.ReasonReady)
	notReady := cond(flotillav1.PropagationReady, metav1.ConditionFalse, "NotReady")
	failedApply := cond(flotillav1.PropagationApplied, metav1.ConditionFalse, flotillav1.ReasonApplyFailed)
	for _, tc := range []struct {
		name   string
		conds  []metav1.Condition
		phase  flotillav1.RolloutPhase
		want   string // Reconciling, Stalled or ""
		reason string
	}{
		{"waits for approval", []metav1.Condition{applied, ready}, flotillav1.RolloutWaitingForApproval, Reconciling, "RolloutWaitingForApproval"},
		{"soaks", []metav1.Condition{applied, ready}, flotillav1.RolloutSoaking, Reconciling, "RolloutSoaking"},
		{"progresses", []metav1.Condition{applied, ready}, flotillav1.RolloutProgressing, Reconciling, "RolloutProgressing"},
		{"progresses, a cluster not ready yet", []metav1.Condition{applied, notReady}, flotillav1.RolloutProgressing, Reconciling, "NotReady"},
		{"halted", []metav1.Condition{applied, notReady}, flotillav1.RolloutHalted, Stalled, "RolloutHalted"},
		{"halted by a refusal", []metav1.Condition{failedApply}, flotillav1.RolloutHalted, Stalled, "RolloutHalted"},
		{"a refusal while it progresses", []metav1.Condition{failedApply}, flotillav1.RolloutProgressing, Stalled, flotillav1.ReasonApplyFailed},
		{"complete", []metav1.Condition{applied, ready}, flotillav1.RolloutComplete, "", ""},
		{"paused", []metav1.Condition{applied, ready}, flotillav1.RolloutPaused, "", ""},
		{"undone", []metav1.Condition{applied, ready}, flotillav1.RolloutRolledBack, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tc.conds...)
			r := &flotillav1.RolloutStatus{Revision: "v2", Phase: tc.phase, Message: "what it waits for"}
			PropagationWithRollout(&conds, 3, r)
			rec, stall := meta.FindStatusCondition(conds, Reconciling), meta.FindStatusCondition(conds, Stalled)
			switch {
			case tc.want == "" && (rec != nil || stall != nil):
				t.Fatalf("Reconciling %+v, Stalled %+v; want neither", rec, stall)
			case tc.want == Reconciling && (rec == nil || stall != nil || rec.Reason != tc.reason):
				t.Fatalf("Reconciling %+v, Stalled %+v; want Reconciling %s", rec, stall, tc.reason)
			case tc.want == Stalled && (stall == nil || rec != nil || stall.Reason != tc.reason):
				t.Fatalf("Reconciling %+v, Stalled %+v; want Stalled %s", rec, stall, tc.reason)
			}
		})
	}
	conds := []metav1.Condition{applied, ready}
	PropagationWithRollout(&conds, 1, nil)
	if len(conds) != 2 {
		t.Errorf("no rollout changed the conditions: %+v", conds)
	}
}
