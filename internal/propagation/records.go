package propagation

import (
	"slices"
	"sort"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ledgerOwner is the propagator as the owner of Delivery records.
func (p propagator) ledgerOwner() ledger.Owner {
	return ledger.Owner{Owner: p.owner(), APIVersion: flotillav1.GroupVersion.String(), ObjectKind: p.kind, UID: p.obj.GetUID(),
		Placement: p.placementKey()}
}

// recordResults hands each chosen cluster's latest delivery result to the ledger, which
// writes it into the cluster's Delivery record aside, where it changed.
func (r *Reconciler) recordResults(owner render.Owner, in statusInput) {
	for _, c := range in.targets {
		res, ok := in.results[c]
		rec, recorded := in.records[c]
		objs, submitted := in.objects[c]
		if !ok || res.Disconnected || !submitted || res.Revision != in.revisionOf(c) {
			continue
		}
		var prev flotillav1.DeliveryStatus
		if recorded {
			prev = rec.Status
		}
		r.Ledger.Report(owner, c, prev, res, objs)
	}
}

// recordedKinds returns the kinds to look in for the propagator's objects on a cluster: its
// record's and extra.
func recordedKinds(records map[string]*flotillav1.Delivery, cluster string, extra []string) []string {
	out := slices.Clone(extra)
	if rec, ok := records[cluster]; ok {
		out = append(out, rec.Spec.Kinds...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
