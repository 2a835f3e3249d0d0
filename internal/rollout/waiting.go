package rollout

import flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"

// WaitingStage is the stage a rollout waiting for approval waits for: the first stage with
// clusters none of which has started. "" when the rollout does not wait for an approval.
func WaitingStage(r *flotillav1.RolloutStatus) string {
	if r == nil || r.Phase != flotillav1.RolloutWaitingForApproval {
		return ""
	}
	for _, s := range r.Stages {
		if s.Clusters > 0 && s.Pending == s.Clusters {
			return s.Name
		}
	}
	return ""
}
