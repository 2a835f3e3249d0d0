package transparent

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// guard is what the holds of package holds see of u's pass: placement is u's Placement (nil
// when it does not exist, or u names none). The caller adds the clusters chosen and delivered.
func (r *Reconciler) guard(u *unstructured.Unstructured, owner render.Owner, placement *flotillav1.Placement) holds.Pass {
	return holds.Pass{Owner: owner, Placement: placement, Budget: holds.DefaultBudget,
		PlacementName: u.GetNamespace() + "/" + u.GetLabels()[flotillav1.LabelPlacement], PlacementRef: "the label " + flotillav1.LabelPlacement,
		Confirmed: u.GetAnnotations()[flotillav1.AnnotationConfirmPrune]}
}

// released is what the holds see of an object that lost its flotilla.dev/placement label and
// is delivered where records say: removing one label is as easy to do by mistake (an apply
// of a manifest that lacks it, a label edit gone wrong) as emptying a Placement, and would
// remove u from every cluster.
func (r *Reconciler) released(u *unstructured.Unstructured, owner render.Owner, records map[string]*flotillav1.Delivery) holds.Pass {
	guard := r.guard(u, owner, nil)
	guard.Released, guard.Undo = "the label "+flotillav1.LabelPlacement+" was removed", "Label it again"
	guard.Delivered = ledger.Clusters(records)
	return guard
}

// unlabelled handles an object that lost its flotilla.dev/placement label: held on every
// cluster it is on, with a PruneBlocked Event naming the confirmation, until it is confirmed
// (or labelled again); then let go from all of them like a deleted object.
func (r *Reconciler) unlabelled(ctx context.Context, u *unstructured.Unstructured, owner render.Owner) (ownerpass.Step, error) {
	if !controllerutil.ContainsFinalizer(u, flotillav1.FinalizerCleanup) {
		return ownerpass.Step{}, nil
	}
	records, err := r.Ledger.Records(ctx, owner)
	if err != nil {
		return ownerpass.Step{}, err
	}
	if h := holds.Check(r.released(u, owner, records)); h != nil {
		r.reportFailure(u, owner, h.Reason, h.Message)
		return ownerpass.Step{}, nil
	}
	return ownerpass.Step{LetGo: true}, nil
}
