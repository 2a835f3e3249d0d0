package rollout

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The gate's memory keeps a cluster's since and a condition's transition time from one pass
// to the next; a status writer settles what it writes against what the status says already,
// so that they also survive a restart of the controller (the memory starts empty) and a pass
// that changes nothing writes nothing.

// SettleRow returns next with prev's since when the cluster is in the same stage, state and
// revision as prev says.
func SettleRow(prev, next *flotillav1.ClusterRolloutState) *flotillav1.ClusterRolloutState {
	if next == nil {
		return nil
	}
	out := *next
	if prev != nil && prev.Stage == next.Stage && prev.State == next.State && prev.Revision == next.Revision && !prev.Since.IsZero() {
		out.Since = prev.Since
	}
	return &out
}

// SettleStatus returns a copy of next whose conditions keep prev's transition times where
// their status is the same (meta.SetStatusCondition).
func SettleStatus(prev, next *flotillav1.RolloutStatus) *flotillav1.RolloutStatus {
	if next == nil {
		return nil
	}
	out := next.DeepCopy()
	if prev == nil || len(prev.Conditions) == 0 {
		return out
	}
	conds := make([]metav1.Condition, 0, len(next.Conditions))
	for _, c := range next.Conditions {
		if old := meta.FindStatusCondition(prev.Conditions, c.Type); old != nil {
			conds = append(conds, *old.DeepCopy())
		}
		meta.SetStatusCondition(&conds, c)
	}
	out.Conditions = conds
	return out
}
