package propagation

import (
	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

// ledgerOwner is the propagator as the owner of Delivery records.
func (p propagator) ledgerOwner() ledger.Owner {
	return ledger.Owner{Owner: p.owner(), APIVersion: flotillav1.GroupVersion.String(), ObjectKind: p.kind, UID: p.obj.GetUID(),
		Placement: p.placementKey()}
}
