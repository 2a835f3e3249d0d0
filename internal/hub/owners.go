package hub

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// RecordOwners are the kinds Delivery records may belong to, and the Placement each names:
// Propagations and ClusterPropagations (spec.placementRef), ResourceGraphDefinitions (through
// their APIPropagation), and the kinds of transparent mode (the flotilla.dev/placement label,
// in the object's namespace). A record of any other owner is not believed (ledger.Trust).
func RecordOwners() ledger.Owners {
	gk := func(kind string) schema.GroupKind { return flotillav1.GroupVersion.WithKind(kind).GroupKind() }
	owners := ledger.Owners{
		gk("Propagation"): {
			New: func() client.Object { return &flotillav1.Propagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.(*flotillav1.Propagation).Spec.PlacementRef.Name}, nil
			},
		},
		gk("ClusterPropagation"): {
			New: func() client.Object { return &flotillav1.ClusterPropagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				ref := o.(*flotillav1.ClusterPropagation).Spec.PlacementRef
				return client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, nil
			},
		},
		kro.GroupVersion.WithKind("ResourceGraphDefinition").GroupKind(): fleetapi.RecordOwner(),
	}
	for _, gvk := range transparent.Kinds {
		owners[gvk.GroupKind()] = ledger.OwnerKind{
			New: func() client.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				return u
			},
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[flotillav1.LabelPlacement]}, nil
			},
		}
	}
	return owners
}
