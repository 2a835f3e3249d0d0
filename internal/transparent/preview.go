package transparent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// Preview computes what the labelled hub object u (of one of Kinds) wants on the clusters its
// Placement chooses, reading the hub through hub, with the controller's own steps: its holds
// (guard, released, holds.Planned), the input it gathers (gather: what the records say each
// cluster runs and fits, the HPAs that follow a divided workload), and each cluster's copy as
// package percluster makes it (its share, then the Placement's overrides). A plan shows where a division ends, not the replicas a
// move holds on the way; an HPA withheld where its workload has no share is left out. owners
// are the kinds Delivery records may belong to (ledger.Trust). It changes nothing.
func Preview(ctx context.Context, hub client.Client, u *unstructured.Unstructured, owners ledger.Owners) (*plan.Desired, error) {
	r := &Reconciler{GVK: u.GroupVersionKind(), Hub: hub, Ledger: &ledger.Ledger{Hub: hub, Owners: owners}}
	if !carried(r.GVK) {
		return nil, fmt.Errorf("transparent mode does not carry %s", r.GVK.Kind)
	}
	owner := render.Owner{Kind: ownerKind(r.GVK), Namespace: u.GetNamespace(), Name: u.GetName()}
	d := &plan.Desired{Owner: owner, Strategy: strategy, Kinds: []schema.GroupVersionKind{r.GVK}, Prune: true}
	records, err := r.Ledger.Records(ctx, owner)
	if err != nil {
		return nil, err
	}
	placementName := u.GetLabels()[flotillav1.LabelPlacement]
	if placementName == "" {
		h := holds.Check(r.released(u, owner, records))
		if h == nil {
			return nil, fmt.Errorf("%s %s/%s has no label %s, so it is delivered nowhere; label it with the name of a Placement of its namespace",
				r.GVK.Kind, u.GetNamespace(), u.GetName(), flotillav1.LabelPlacement)
		}
		d.Holds = []string{h.Message}
		return d, nil
	}
	placement, err := r.placement(ctx, u.GetNamespace(), placementName)
	if err != nil {
		return nil, err
	}
	guard := r.guard(u, owner, placement)
	if placement == nil {
		d.Holds = []string{holds.Check(guard).Message}
		return d, nil
	}
	decisions := decisionsOf(placement)
	guard.Chosen, guard.Delivered = decisions, ledger.Clusters(records)
	if h := holds.Planned(guard); h != nil {
		d.Holds = []string{h.Message}
	}
	rendered, err := render.Render(u, owner)
	if err != nil {
		return nil, err
	}
	pc, err := r.input(ctx, u, owner, placement, decisions, rendered, records)
	if err != nil {
		return nil, err
	}
	var hold string
	if pc.Pins, hold = fanout.PlannedGate(pc, u.GetAnnotations()[flotillav1.AnnotationApprove], records); hold != "" {
		d.Holds = append(d.Holds, hold)
	}
	// Revisions are read whole, uncached, as the controller reads them (revisions.Store.Reader).
	if err := loadPins(ctx, &revisions.Store{Reader: hub}, &pc); err != nil {
		return nil, err
	}
	if _, err := r.gather(ctx, u, &pc, records, false); err != nil {
		return nil, err
	}
	out, err := fanout.Planned(ctx, r.Ledger, pc)
	if err != nil {
		return nil, err
	}
	for _, c := range out.Clusters(decisions) { // an HPA withheld where its workload has no share: removed there
		w := out.Want[c]
		cd := plan.ClusterDesired{Cluster: c, Objects: w.Objects, Revision: w.Revision, Pinned: w.Pinned, Delivered: plan.DeliveredKeys(records[c])}
		if msg, failed := out.Failed[c]; failed {
			cd.Err = fmt.Errorf("placement %s: %s", placement.Name, msg)
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d, nil
}
