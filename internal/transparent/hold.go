package transparent

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// confirmEverywhere is the flotilla.dev/confirm-prune value that lets one edit remove a
// transparent-mode object from every cluster it is on: its Placement now chooses no cluster,
// or its flotilla.dev/placement label was removed. Removing the object everywhere takes the
// confirmation away again, so it never carries over to a later removal.
const confirmEverywhere = "everywhere"

// holdReason says why nothing may be removed now, or "": the Placement's status lags its spec
// (it has not decided yet), or it chooses no cluster while the object is delivered somewhere
// and the removal from everywhere is not confirmed (confirm is the command that confirms it).
func holdReason(p *flotillav1.Placement, decisions, delivered []string, confirmed, confirm string) string {
	switch {
	case p.Status.ObservedGeneration != p.Generation:
		return fmt.Sprintf("Placement %s has not scheduled its latest change yet; what is delivered stays where it is", p.Name)
	case len(decisions) == 0 && len(delivered) > 0 && confirmed != confirmEverywhere:
		return fmt.Sprintf("Placement %s now chooses no cluster; the object is kept on %d clusters (%s). Fix the Placement, or confirm removing it from all of them with: %s",
			p.Name, len(delivered), strings.Join(delivered, ", "), confirm)
	}
	return ""
}

// unlabelledHold says why an object whose flotilla.dev/placement label was removed stays on
// the clusters it is delivered to, or "" when its removal from all of them may go ahead:
// nothing is delivered, or the removal is confirmed. Removing one label is as easy to do by
// mistake (an apply of a manifest that lacks it, a label edit gone wrong) as emptying a
// Placement, and it would remove the object from every cluster at once.
func unlabelledHold(delivered []string, confirmed, confirm string) string {
	if len(delivered) == 0 || confirmed == confirmEverywhere {
		return ""
	}
	return fmt.Sprintf("the label %s was removed; the object is kept on %d clusters (%s). Label it again, or confirm removing it from all of them with: %s",
		flotillav1.LabelPlacement, len(delivered), strings.Join(delivered, ", "), confirm)
}

// confirmCommand is the command, ready to paste, that confirms removing u from every cluster.
func confirmCommand(u *unstructured.Unstructured) string {
	return fmt.Sprintf("kubectl annotate --overwrite -n %s %s %s %s=%s",
		u.GetNamespace(), strings.ToLower(ownerKind(u.GroupVersionKind())), u.GetName(), flotillav1.AnnotationConfirmPrune, confirmEverywhere)
}

// unlabelled handles an object that lost its flotilla.dev/placement label: held on every
// cluster it is on, with a PruneBlocked Event naming the confirmation, until it is confirmed
// (or labelled again); then removed from all of them like a deleted object.
func (r *Reconciler) unlabelled(ctx context.Context, u *unstructured.Unstructured, owner render.Owner) error {
	if !controllerutil.ContainsFinalizer(u, flotillav1.FinalizerCleanup) {
		return nil
	}
	records, err := r.Ledger.Records(ctx, owner)
	if err != nil {
		return err
	}
	if hold := unlabelledHold(ledger.Clusters(records), u.GetAnnotations()[flotillav1.AnnotationConfirmPrune], confirmCommand(u)); hold != "" {
		r.reportFailure(u, owner, flotillav1.ReasonPruneBlocked, hold)
		return nil
	}
	return r.cleanup(ctx, u, owner)
}
