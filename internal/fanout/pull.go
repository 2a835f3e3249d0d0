package fanout

import (
	"fmt"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
)

// A cluster an agent delivers to (ledger.Agents: a pull cluster, Cluster.spec.mode Pull, or
// any cluster of a sharded hub) is never delivered to by the hub's deliverer: its agent fetches
// the work its records say (spec.work, written here as for any cluster) from the hub's work
// endpoint, delivers it on the spoke with the same engine, and reports the results into the
// records' status (package clusterwork, through the ledger). So, for a pull cluster, a pass
// submits nothing to the hub's deliverer and reports nothing into its records: the result it
// counts is what the agent last reported (pulledResult). Its removal is the agent's too: the
// hub deletes the record at once (it cannot see the spoke), and the agent removes the owner's
// objects once the owner has been missing from its work for its grace (flotilla agent
// --removal-grace).

// pulledResult is the result of a pull cluster as its agent last reported it in the record:
// complete at want's revision once the record's status.revision names it (the agent reports
// a revision complete only when it delivered it whole; status.revision then stays while a
// later delivery of it fails, which the counts show: recordedReadyAt reads both). ok is false
// when there is no record.
func pulledResult(rec *flotillav1.Delivery, want Want, wanted bool) (deliver.Result, bool) {
	if rec == nil {
		return deliver.Result{}, false
	}
	st := rec.Status
	res := deliver.Result{Revision: st.Revision, Complete: st.Revision != "", Applied: int(st.Applied), Ready: int(st.Ready),
		Failed: int(st.Failed), Drifted: int(st.Drifted), Fighting: int(st.Fighting), Message: st.Message}
	if !wanted {
		return res, st.Revision != ""
	}
	res.Revision, res.Complete = want.Revision, st.Revision == want.Revision
	if !res.Complete && res.Message == "" {
		res.Message = fmt.Sprintf("waiting for the cluster's agent to report revision %s", want.Revision)
	}
	return res, true
}
