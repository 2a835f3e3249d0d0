package hub

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// ownerSource is a hub kind whose objects are owners, and the owner each object is (false
// when it is not one now).
type ownerSource struct {
	obj     client.Object
	ownerOf func(client.Object) (render.Owner, bool)
}

// feedOwners keeps reg current with every hub owner, from the informers the owner controllers
// use anyway (the same object types, so no informer is added): Propagations,
// ClusterPropagations, the RGDs behind fleet APIs' CRDs, and the objects transparent mode
// delivers (labelled with a Placement, or still being cleaned up).
func feedOwners(ctx context.Context, hubCache cache.Cache, reg *owners.Registry) error {
	named := func(kind string) func(client.Object) (render.Owner, bool) {
		return func(o client.Object) (render.Owner, bool) {
			return render.Owner{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, true
		}
	}
	sources := []ownerSource{
		{&flotillav1.Propagation{}, named("Propagation")},
		{&flotillav1.ClusterPropagation{}, named("ClusterPropagation")},
		{&kro.ResourceGraphDefinition{}, named(fleetapi.OwnerKind)},
	}
	for _, gvk := range transparent.Kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		delivers := named((&transparent.Reconciler{GVK: gvk}).OwnerKind())
		sources = append(sources, ownerSource{u, func(o client.Object) (render.Owner, bool) {
			owner, _ := delivers(o)
			_, labelled := o.GetLabels()[flotillav1.LabelPlacement]
			return owner, labelled || controllerutil.ContainsFinalizer(o, flotillav1.FinalizerCleanup)
		}})
	}
	for _, s := range sources {
		inf, err := hubCache.GetInformer(ctx, s.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch owners of kind %T: %w", s.obj, err)
		}
		ownerOf := s.ownerOf
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
