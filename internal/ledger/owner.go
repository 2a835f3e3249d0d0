package ledger

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// OwnerOf is the owner a record's spec names, as the rest of Flotilla names it: Flotilla's own
// kinds by their Kind (Propagation), transparent-mode kinds by Kind and group (Deployment.apps;
// a core kind by its Kind). Revisions and labels are keyed by this name.
func OwnerOf(o flotillav1.DeliveryOwner) render.Owner {
	kind := o.Kind
	if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil {
		kind = render.OwnerKind(gv.Group, o.Kind, flotillav1.GroupVersion.Group)
	}
	return render.Owner{Kind: kind, Namespace: o.Namespace, Name: o.Name}
}
