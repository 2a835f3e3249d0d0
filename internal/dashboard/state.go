package dashboard

import (
	"strings"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// States of an object on a cluster, as pages show them.
const (
	stateReady    = "Ready"
	stateApplied  = "Applied"
	statePending  = "Pending"
	stateDrifted  = "Drifted"
	stateFailed   = "Failed"
	stateConflict = "Conflict"
	stateHeld     = "Held"
)

// objectState is the state of one object of a record on its cluster. The record counts its
// objects (applied, ready, failed); the owner's status names drifted and fighting objects
// (for a bounded number of clusters), and the record's message names the first failure. An
// object someone on the cluster keeps changing back is in Conflict, as is a failure the
// cluster refused for another field owner.
func objectState(d *flotillav1.Delivery, o object, res *flotillav1.ClusterResult, held bool) string {
	if res != nil {
		for _, f := range res.FightingObjects {
			if f.Object == o.Describe {
				return stateConflict
			}
		}
		for _, f := range res.DriftedObjects {
			if f.Object == o.Describe {
				return stateDrifted
			}
		}
	}
	st := d.Status
	if st.Failed > 0 && (st.Failed == st.Count || strings.Contains(st.Message, o.Name)) {
		if strings.Contains(strings.ToLower(st.Message), "conflict") {
			return stateConflict
		}
		return stateFailed
	}
	if held {
		return stateHeld
	}
	if st.Failed > 0 { // another object failed: this one is among the applied, or waits
		if st.Applied+st.Failed >= st.Count {
			return stateApplied
		}
		return statePending
	}
	if res != nil && int(res.Drifted) <= len(res.DriftedObjects) && int(res.Fighting) <= len(res.FightingObjects) {
		return progressState(d) // the owner names every drifted object: this one is not
	}
	return recordState(d)
}

// recordState is the state of a record's delivery as a whole.
func recordState(d *flotillav1.Delivery) string {
	st := d.Status
	switch {
	case st.Failed > 0:
		return stateFailed
	case st.Fighting > 0:
		return stateConflict
	case st.Drifted > 0:
		return stateDrifted
	}
	return progressState(d)
}

// progressState is how far a record's delivery went, drift aside.
func progressState(d *flotillav1.Delivery) string {
	st := d.Status
	switch {
	case st.Failed > 0:
		return stateFailed
	case st.Count > 0 && st.Ready == st.Count:
		return stateReady
	case st.Count > 0 && st.Applied == st.Count:
		return stateApplied
	}
	return statePending
}
