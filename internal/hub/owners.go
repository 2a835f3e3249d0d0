package hub

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/hubmetrics"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// controllers are the hub's owner controllers: the delivery results and drift of their owners go
// back to them.
type controllers struct {
	propagation *propagation.Reconciler
	// transparent are transparent mode's, one per kind, by owner kind.
	transparent map[string]*transparent.Reconciler
	fleetAPIs   *fleetapi.Reconciler
}

// newControllers makes the owner controllers, to be set up once the deliverer and the ledger
// exist (setupDelivery).
func newControllers(opts Options) *controllers {
	c := &controllers{
		propagation: &propagation.Reconciler{AdminNamespaces: opts.AdminNamespaces},
		transparent: map[string]*transparent.Reconciler{},
		fleetAPIs:   &fleetapi.Reconciler{AdminNamespaces: opts.AdminNamespaces},
	}
	for _, gvk := range transparent.Kinds {
		t := &transparent.Reconciler{GVK: gvk}
		c.transparent[t.OwnerKind()] = t
	}
	return c
}

// memoryOwners are the owner kinds whose conditions their controllers keep (transparent mode's),
// for the hub's flotilla_owners series.
func (c *controllers) memoryOwners() []hubmetrics.MemoryOwners {
	out := make([]hubmetrics.MemoryOwners, 0, len(c.transparent))
	for _, gvk := range transparent.Kinds {
		out = append(out, c.transparent[(&transparent.Reconciler{GVK: gvk}).OwnerKind()])
	}
	return out
}

// ownerKinds is the one table of the hub's owner kinds, from which the ledger's trust in
// Delivery records, the spoke caches' known owners and the routing of delivery results and
// drift are all built: Propagations and ClusterPropagations (spec.placementRef),
// ResourceGraphDefinitions (through their APIPropagation), and the kinds of transparent mode
// (the flotilla.dev/placement label, in the object's namespace; an object still being cleaned
// up still owns its copies). c's controllers are told of their owners' results and drift; nil c
// leaves the kinds without controllers (RecordOwners).
func ownerKinds(c *controllers) *ownerkinds.Registry {
	named := func(kind string) func(client.Object) (render.Owner, bool) {
		return func(o client.Object) (render.Owner, bool) {
			return render.Owner{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, true
		}
	}
	// Without c the kinds have no controllers: nil interfaces, not interfaces of nil pointers.
	var prop, apis ownerkinds.Controller
	tctl := map[string]ownerkinds.Controller{}
	if c != nil {
		prop, apis = c.propagation, c.fleetAPIs
		for kind, t := range c.transparent {
			tctl[kind] = t
		}
	}
	// A Placement an owner names in its own object.
	placementOf := func(of func(client.Object) client.ObjectKey) func(context.Context, client.Reader, client.Object) (client.ObjectKey, error) {
		return func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) { return of(o), nil }
	}
	kinds := []ownerkinds.Kind{
		{Name: "Propagation", Owner: named("Propagation"), Controller: prop, Record: ledger.OwnerKind{
			New:       func() client.Object { return &flotillav1.Propagation{} },
			Placement: placementOf(propagation.PlacementOf),
		}},
		{Name: "ClusterPropagation", Owner: named("ClusterPropagation"), Controller: prop, Record: ledger.OwnerKind{
			New:       func() client.Object { return &flotillav1.ClusterPropagation{} },
			Placement: placementOf(propagation.PlacementOf),
		}},
		{Name: fleetapi.OwnerKind, Owner: named(fleetapi.OwnerKind), Controller: apis, Record: fleetapi.RecordOwner()},
	}
	for _, gvk := range transparent.Kinds {
		kind := (&transparent.Reconciler{GVK: gvk}).OwnerKind()
		delivers := named(kind)
		kinds = append(kinds, ownerkinds.Kind{
			Name:       kind,
			Controller: tctl[kind],
			Record: ledger.OwnerKind{
				New: func() client.Object {
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(gvk)
					return u
				},
				Placement: placementOf(transparent.PlacementOf),
			},
			Owner: func(o client.Object) (render.Owner, bool) {
				owner, _ := delivers(o)
				return owner, transparent.Delivers(o)
			},
		})
	}
	return ownerkinds.New(kinds...)
}

// RecordOwners are the kinds Delivery records may belong to, and the Placement each names. A
// record of any other owner is not believed (ledger.Trust).
func RecordOwners() ledger.Owners {
	return ownerKinds(nil).RecordOwners(install.Scheme())
}

// feedOwners keeps reg current with every owner of kinds, from the informers the owner
// controllers use anyway (the same object types, so no informer is added).
func feedOwners(ctx context.Context, hubCache cache.Cache, kinds *ownerkinds.Registry, reg *owners.Registry) error {
	for _, k := range kinds.Kinds() {
		obj := k.Record.New()
		inf, err := hubCache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch owners of kind %T: %w", obj, err)
		}
		ownerOf := k.Owner
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

// agentsEverywhere says whether every cluster is delivered by an agent (a sharded hub) or only
// pull clusters are (ledger.Agents).
func (c *controllers) agentsEverywhere(everywhere bool) {
	c.propagation.Agents.Everywhere = everywhere
	c.fleetAPIs.Agents.Everywhere = everywhere
	for _, t := range c.transparent {
		t.Agents.Everywhere = everywhere
	}
}
