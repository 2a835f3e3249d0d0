package fleetapi

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// SpokeFunc reaches a cluster for a plan: a client, and the config its schemas are read with.
type SpokeFunc func(ctx context.Context, cluster string) (client.Client, *rest.Config, error)

// PreviewAPIs is Preview of every RGD the APIPropagation name serves (placerOf), by RGD name.
func PreviewAPIs(ctx context.Context, hub client.Client, name string, spokes SpokeFunc, owners ledger.Owners) ([]*plan.Desired, error) {
	var props flotillav1.APIPropagationList
	if err := hub.List(ctx, &props); err != nil {
		return nil, err
	}
	var rgds kro.ResourceGraphDefinitionList
	if err := hub.List(ctx, &rgds); err != nil {
		return nil, err
	}
	sort.Slice(rgds.Items, func(i, j int) bool { return rgds.Items[i].Name < rgds.Items[j].Name })
	var out []*plan.Desired
	for i := range rgds.Items {
		placer := placerOf(&rgds.Items[i], props.Items)
		if placer == nil || placer.Name != name {
			continue
		}
		d, err := Preview(ctx, hub, &rgds.Items[i], placer, spokes, owners)
		if err != nil {
			return nil, fmt.Errorf("ResourceGraphDefinition %s: %w", rgds.Items[i].Name, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// PreviewRGD is Preview of the RGD name under the APIPropagation that serves it.
func PreviewRGD(ctx context.Context, hub client.Client, name string, spokes SpokeFunc, owners ledger.Owners) (*plan.Desired, error) {
	rgd := &kro.ResourceGraphDefinition{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, rgd); err != nil {
		return nil, err
	}
	var props flotillav1.APIPropagationList
	if err := hub.List(ctx, &props); err != nil {
		return nil, err
	}
	placer := placerOf(rgd, props.Items)
	if placer == nil {
		return nil, fmt.Errorf("no APIPropagation serves ResourceGraphDefinition %s (none chooses it, or it is marked %s=false); choose it in an APIPropagation's spec.resourceGraphDefinitions",
			name, HubOnlyMarker)
	}
	return Preview(ctx, hub, rgd, placer, spokes, owners)
}

// Preview computes what serving rgd under placer delivers, with the controller's own pass
// (ownerpass.Plan), reading each chosen cluster through spokes; a cluster the controller would
// deliver nothing to has its Err say why. Admin namespaces are not known here. It changes nothing.
func Preview(ctx context.Context, hub client.Client, rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation,
	spokes SpokeFunc, owners ledger.Owners) (*plan.Desired, error) {
	owner := ownerOf(rgd.Name)
	d := &plan.Desired{Owner: owner, Strategy: strategyOf(placer, rgd.Name), Kinds: []schema.GroupVersionKind{crdKind}, Prune: true}
	placement, err := ownerpass.PlacementOf(ctx, hub, PlacementOf(placer))
	if err != nil {
		return nil, err
	}
	if placement == nil {
		d.Holds = []string{holds.Check(guardOf(placer, rgd.Name, nil)).Message}
		return d, nil
	}
	// Revisions are read whole, uncached, as the controller reads them; compiles last this plan.
	r := &Reconciler{Hub: hub, Revisions: &revisions.Store{Reader: hub}, compiles: newCompiles()}
	p := &rgdPass{r: r, rgd: rgd, placer: placer, placement: placement, owner: owner,
		result: func(string) (deliver.Result, bool) { return deliver.Result{}, false }}
	p.read = func(ctx context.Context, c string) clusterRead {
		cl, cfg, err := spokes(ctx, c)
		if err != nil {
			row := flotillav1.APIClusterResult{Cluster: c, API: rgd.Name, Phase: flotillav1.APIPending, Reason: flotillav1.ReasonDisconnected, Message: err.Error()}
			return clusterRead{plan: clusterPlan{row: row, unread: true}, final: true}
		}
		view := spokeView{name: c, delivered: managedOnly{cl}, live: cl, schemas: func() (*snapshot, error) {
			sn, err := newSnapshot(cfg, time.Now())
			if err != nil {
				return nil, err
			}
			sn.once.Do(sn.readRoot)
			return sn, sn.err
		}}
		return readOn(ctx, view, p.newest, owner)
	}
	pass, err := p.pass()
	if err != nil {
		return nil, err
	}
	if err := ownerpass.Plan(ctx, hub, &ledger.Ledger{Hub: hub, Owners: owners}, pass, d); err != nil {
		return nil, err
	}
	return d, nil
}

// managedOnly reads as the controller's spoke cache does: an object without Flotilla's
// managed-by label is not there.
type managedOnly struct{ client.Reader }

func (m managedOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := m.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if !render.ManagedSelector().Matches(labels.Set(obj.GetLabels())) {
		return apierrors.NewNotFound(schema.GroupResource{Group: obj.GetObjectKind().GroupVersionKind().Group}, key.Name)
	}
	return nil
}
