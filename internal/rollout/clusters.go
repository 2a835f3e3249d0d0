package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// finish fills the outcome's per-cluster rows and the rollout's conditions from the stages'
// members as the pass left them; hold is where each cluster not reached yet stays. It keeps
// in out.Memory which state each cluster is in since when, and the conditions as reported, so
// that a pass that changes nothing reports the same times.
func (out *Outcome) finish(in Input, stages []*stage, hold map[string]string) {
	mem := &out.Memory
	entered, since := mem.Entered, mem.Since
	// Rebuilt: a cluster that left the owner is forgotten.
	mem.Entered, mem.Since = make(map[string]string, len(in.Clusters)), make(map[string]time.Time, len(in.Clusters))
	out.Clusters = make(map[string]flotillav1.ClusterRolloutState, len(in.Clusters))
	for _, st := range stages {
		for _, m := range st.members {
			row := flotillav1.ClusterRolloutState{Stage: st.name, State: st.stateOf(m), Revision: in.Latest}
			if m.state == pending {
				row.Revision = m.Runs
				if h, held := hold[m.Name]; held {
					row.Revision = h
				}
			}
			if held, ok := hold[m.Name]; ok && out.Status != nil && out.Status.Phase == flotillav1.RolloutRolledBack {
				row.Revision = held // undone: every cluster returns to the target
			}
			key := string(row.State) + "@" + row.Revision
			at, ok := since[m.Name]
			if !ok || entered[m.Name] != key {
				at = in.Now
			}
			mem.Entered[m.Name], mem.Since[m.Name] = key, at
			row.Since = metav1.NewTime(at.UTC().Truncate(time.Second))
			out.Clusters[m.Name] = row
		}
	}
	if out.Status == nil {
		return
	}
	conds := append([]metav1.Condition(nil), mem.Conditions...)
	for _, c := range Conditions(out.Status, in.Now) {
		meta.SetStatusCondition(&conds, c)
	}
	mem.Conditions = conds
	out.Status.Conditions = append([]metav1.Condition(nil), conds...)
}

// stateOf is where a member of the stage stands.
func (st *stage) stateOf(m member) flotillav1.RolloutClusterState {
	switch m.state {
	case done:
		if st.soaking {
			return flotillav1.RolloutClusterSoaking
		}
		return flotillav1.RolloutClusterSucceeded
	case failed:
		return flotillav1.RolloutClusterFailed
	case inFlight:
		return flotillav1.RolloutClusterProgressing
	}
	if st.waiting {
		return flotillav1.RolloutClusterWaitingForApproval
	}
	return flotillav1.RolloutClusterPending
}

// state is where the stage stands ("" when no chosen cluster is in it).
func (st *stage) state() flotillav1.RolloutClusterState {
	if len(st.members) == 0 {
		return ""
	}
	s := st.counts()
	switch {
	case st.waiting:
		return flotillav1.RolloutClusterWaitingForApproval
	case st.soaking:
		return flotillav1.RolloutClusterSoaking
	case s.Done == s.Clusters:
		return flotillav1.RolloutClusterSucceeded
	case st.finished() && s.Failed > 0:
		return flotillav1.RolloutClusterFailed
	case st.finished():
		return flotillav1.RolloutClusterSucceeded // the clusters not done are unreachable, passed over
	case s.Pending == s.Clusters:
		return flotillav1.RolloutClusterPending
	}
	return flotillav1.RolloutClusterProgressing
}

// ranState is the state of a cluster given revision outside the stage order (an undo, or a
// revision not kept): how its run of it went, pending when it runs another.
func ranState(c Cluster, revision string) state {
	switch {
	case c.Runs != revision:
		return pending
	case c.Ready:
		return done
	case c.Failed != "":
		return failed
	}
	return inFlight
}

// Conditions are the kstatus-style conditions of a rollout status, each with now as its
// transition time (meta.SetStatusCondition keeps an earlier one while the status is the same):
// Progressing (True while the rollout moves or waits, its reason the phase), Complete (True
// when every cluster runs the revision, Ready) and Halted (True when failures past maxFailures
// halt it, its message naming the failed clusters and why). Every reason is the phase: an
// undone rollout (RolledBack) is none of them, the clusters returning to the revision it
// names, as a person or onFailure: Rollback chose.
func Conditions(s *flotillav1.RolloutStatus, now time.Time) []metav1.Condition {
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	reason, msg := string(s.Phase), s.Message
	if msg == "" {
		msg = "revision " + s.Revision + ": " + reason
	}
	cond := func(typ string, status bool) metav1.Condition {
		c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: at}
		if status {
			c.Status = metav1.ConditionTrue
		}
		return c
	}
	moving := false
	switch s.Phase {
	case flotillav1.RolloutProgressing, flotillav1.RolloutSoaking, flotillav1.RolloutWaitingForApproval, flotillav1.RolloutPaused:
		moving = true
	}
	return []metav1.Condition{
		cond(flotillav1.RolloutConditionProgressing, moving),
		cond(flotillav1.RolloutConditionComplete, s.Phase == flotillav1.RolloutComplete),
		cond(flotillav1.RolloutConditionHalted, s.Phase == flotillav1.RolloutHalted),
	}
}
