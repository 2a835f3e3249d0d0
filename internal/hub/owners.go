package hub

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// ownerKind is one hub kind whose objects own what Flotilla delivers: the one table both the
// ledger's trust in Delivery records and the spoke caches' known owners are built from.
type ownerKind struct {
	// record says how a Delivery record names an owner of this kind, and the Placement it uses.
	record ledger.OwnerKind
	// owner is the owner an object of the kind is, and whether it delivers now.
	owner func(client.Object) (render.Owner, bool)
}

// ownerKinds are Propagations and ClusterPropagations (spec.placementRef),
// ResourceGraphDefinitions (through their APIPropagation), and the kinds of transparent mode
// (the flotilla.dev/placement label, in the object's namespace; an object still being cleaned
// up still owns its copies).
func ownerKinds() []ownerKind {
	named := func(kind string) func(client.Object) (render.Owner, bool) {
		return func(o client.Object) (render.Owner, bool) {
			return render.Owner{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, true
		}
	}
	kinds := []ownerKind{
		{record: ledger.OwnerKind{
			New: func() client.Object { return &flotillav1.Propagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.(*flotillav1.Propagation).Spec.PlacementRef.Name}, nil
			},
		}, owner: named("Propagation")},
		{record: ledger.OwnerKind{
			New: func() client.Object { return &flotillav1.ClusterPropagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				ref := o.(*flotillav1.ClusterPropagation).Spec.PlacementRef
				return client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, nil
			},
		}, owner: named("ClusterPropagation")},
		{record: fleetapi.RecordOwner(), owner: named(fleetapi.OwnerKind)},
	}
	for _, gvk := range transparent.Kinds {
		delivers := named((&transparent.Reconciler{GVK: gvk}).OwnerKind())
		kinds = append(kinds, ownerKind{
			record: ledger.OwnerKind{
				New: func() client.Object {
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(gvk)
					return u
				},
				Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
					return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[flotillav1.LabelPlacement]}, nil
				},
			},
			owner: func(o client.Object) (render.Owner, bool) {
				owner, _ := delivers(o)
				_, labelled := o.GetLabels()[flotillav1.LabelPlacement]
				return owner, labelled || controllerutil.ContainsFinalizer(o, flotillav1.FinalizerCleanup)
			},
		})
	}
	return kinds
}

// RecordOwners are the kinds Delivery records may belong to, and the Placement each names. A
// record of any other owner is not believed (ledger.Trust).
func RecordOwners() ledger.Owners {
	out := ledger.Owners{}
	for _, k := range ownerKinds() {
		gvk, err := apiutil.GVKForObject(k.record.New(), install.Scheme())
		if err != nil {
			panic(err) // every kind of the table is registered in the hub's scheme
		}
		out[gvk.GroupKind()] = k.record
	}
	return out
}

// feedOwners keeps reg current with every hub owner, from the informers the owner controllers
// use anyway (the same object types, so no informer is added).
func feedOwners(ctx context.Context, hubCache cache.Cache, reg *owners.Registry) error {
	for _, k := range ownerKinds() {
		obj := k.record.New()
		inf, err := hubCache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch owners of kind %T: %w", obj, err)
		}
		ownerOf := k.owner
		fed, err := inf.AddEventHandler(reg.Feed(false, func(obj any) (render.Owner, bool) {
			o, ok := obj.(client.Object)
			if !ok {
				return render.Owner{}, false
			}
			return ownerOf(o)
		}))
		if err != nil {
			return err
		}
		reg.AddSource(fed.HasSynced)
	}
	return nil
}
