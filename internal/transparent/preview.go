package transparent

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
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
	if !slices.Contains(Kinds, r.GVK) {
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
	placement, err := ownerpass.PlacementOf(ctx, r.Hub, client.ObjectKey{Namespace: u.GetNamespace(), Name: placementName})
	if err != nil {
		return nil, err
	}
	guard := r.guard(u, owner, placement)
	if placement == nil {
		d.Holds = []string{holds.Check(guard).Message}
		return d, nil
	}
	rendered, paused, err := r.render(u, owner, placement)
	if err != nil {
		return nil, err
	}
	pass, err := r.pass(u, owner, placement, rendered, paused)
	if err != nil {
		return nil, err
	}
	if err := ownerpass.Plan(ctx, hub, r.Ledger, pass, d); err != nil {
		return nil, err
	}
	return d, nil
}
