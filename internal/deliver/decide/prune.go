package decide

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Unbudgeted is the PruneBudget of a delivery that removes an owner from a cluster: the caller
// decided the removal (and holds it when its own input is in doubt), so no deletion of it waits.
const Unbudgeted = -1

// Kept says why an object of the owner's (Owned) that its desired set no longer has stays on
// the cluster, or "" when a prune deletes it. A protected object stays whatever the owner
// wants, so an object can outlive its hub copy; an Orphan strategy leaves every such object,
// unmanaged from then on. Kept objects count as owned but not as deleted in OverBudget.
func Kept(obj metav1.Object, s Strategy) string {
	switch {
	case obj.GetLabels()[flotillav1.LabelProtected] == "true":
		return "labelled " + flotillav1.LabelProtected
	case s.Deletion == flotillav1.DeletionOrphan:
		return "strategy.deletion is Orphan"
	}
	return ""
}

// OverBudget reports whether a prune of the given revision that deletes stale of the owner's
// owned objects on a cluster must wait for confirmation: it deletes more than the budget's
// share of them, or all of them (a selection gone wrong looks exactly like that), unless this
// very revision was confirmed. A confirmation of an earlier revision does not carry over: a
// different change deserves its own look. Deleting nothing never waits.
func OverBudget(s Strategy, revision string, stale, owned int) bool {
	if stale == 0 || s.PruneBudget == Unbudgeted || s.PruneConfirmed == revision {
		return false
	}
	return stale >= owned || stale*100 > s.PruneBudget*owned
}
