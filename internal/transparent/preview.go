package transparent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Preview computes what the labelled hub object u (of one of Kinds) wants on the clusters its
// Placement chooses, reading the hub through hub, with the controller's own steps: its holds
// (guard, released, holds.Planned), its division by the Placement's replica policy
// (divisionOf, from what the records say each cluster runs and fits), the HPAs that follow a
// divided workload (autoscalersOf, scaling), and each cluster's copy (perCluster: its share,
// then the Placement's overrides). A plan shows where a division ends, not the replicas a
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
	facts := r.factsOf(ctx, decisions)
	pass, err := r.previewPass(ctx, u, owner, rendered, placement, decisions, records, facts)
	if err != nil {
		return nil, err
	}
	want, failures, err := perCluster(override.Compile(placement.Spec.Overrides), facts, rendered, decisions, pass)
	if err != nil {
		return nil, err
	}
	for _, c := range decisions {
		cd := plan.ClusterDesired{Cluster: c, Delivered: plan.DeliveredKeys(records[c])}
		switch msg, failed := failures[c]; {
		case failed:
			cd.Err = fmt.Errorf("placement %s: %s", placement.Name, msg)
		case want[c] == nil:
			continue // withheld: the controller removes the copy there
		default:
			cd.Objects, cd.Revision = []*unstructured.Unstructured{want[c]}, render.HashOf(want[c])
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d, nil
}

// previewPass is the object's replicas on each chosen cluster where its division ends: the
// division of a workload (with the HPAs that scale it), or an HPA's share of the bounds of the
// workload it scales.
func (r *Reconciler) previewPass(ctx context.Context, u *unstructured.Unstructured, owner render.Owner, rendered *unstructured.Unstructured,
	placement *flotillav1.Placement, decisions []string, records map[string]*flotillav1.Delivery, facts map[string]override.Cluster) (division.Pass, error) {
	var free map[string]division.Usage
	if limits := override.LimitsOf(facts); len(limits) > 0 && division.Divides(placement.Spec.Replicas, true) {
		var err error
		if free, err = r.Ledger.Free(ctx, owner, limits); err != nil {
			return division.Pass{}, err
		}
	}
	key := render.Key(rendered)
	have, _ := recordedShares(key, decisions, records)
	now := runs{have: have, fits: map[string]map[string]division.Fit{key: ledger.RecordedFits(records, key)}}
	div, divided := divisionOf(owner, rendered, placement, decisions, facts, now, free)
	if !divided {
		return r.scaling(ctx, u, placement, decisions)
	}
	hpas, err := r.autoscalersOf(ctx, u)
	if err != nil {
		return division.Pass{}, err
	}
	return division.NewPass(append([]*unstructured.Unstructured{rendered}, hpas...), div.Shares), nil
}
