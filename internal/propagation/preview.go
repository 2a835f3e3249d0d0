package propagation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Desired is what a Propagation or ClusterPropagation wants on each cluster its Placement
// chooses, computed as the controller computes it: `flotilla plan` and `flotilla diff` show
// it against the clusters.
type Desired struct {
	Owner    render.Owner
	Strategy flotillav1.PropagationStrategy
	Ignore   drift.IgnoreSet
	// Kinds are every kind the owner delivers now or delivered before (where to look for
	// objects to prune).
	Kinds []schema.GroupVersionKind
	// Confirmed is the revision the flotilla.dev/confirm-prune annotation confirms, and
	// Revision the owner's revision on the hub that confirms its prunes on every cluster.
	Confirmed string
	Revision  string
	Clusters  []ClusterDesired
}

// ClusterDesired is what one cluster should hold.
type ClusterDesired struct {
	Cluster  string
	Objects  []*unstructured.Unstructured
	Revision string
	// Delivered are the objects (render.Key) the owner's record says its latest delivery to
	// the cluster had: what a plan counts as the owner's there besides Objects, as a
	// delivery counts what it confirmed (decide.Leftovers).
	Delivered map[string]bool
	// Err says why the cluster's objects cannot be computed (an override fails there).
	Err error
}

// Preview computes what obj (a *Propagation or *ClusterPropagation, stored on the hub or not)
// wants on its clusters, reading the hub through c. owners are the kinds Delivery records may
// belong to (ledger.Trust): records of others are not believed. It changes nothing.
func Preview(ctx context.Context, c client.Client, obj client.Object, owners ledger.Owners) (*Desired, error) {
	var p propagator
	switch o := obj.(type) {
	case *flotillav1.Propagation:
		p = fromPropagation(o)
	case *flotillav1.ClusterPropagation:
		p = fromClusterPropagation(o)
	default:
		return nil, fmt.Errorf("%T is not a Propagation or a ClusterPropagation", obj)
	}
	ignore, err := drift.NewIgnoreSet(p.spec.Strategy.IgnoreFields)
	if err != nil {
		return nil, fmt.Errorf("spec.strategy.%w", err)
	}
	placement, err := placementOf(ctx, c, p)
	if err != nil {
		return nil, err
	}
	decisions := decisionsOf(placement)
	if decisions == nil {
		return nil, fmt.Errorf("placement %s does not exist", p.placementKey())
	}
	hubObjects, _, err := hubSelector{hub: c, secrets: c}.selectObjects(ctx, p)
	if err != nil {
		return nil, err
	}
	owner := p.owner()
	rendered := make([]*unstructured.Unstructured, 0, len(hubObjects))
	for _, o := range hubObjects {
		r, err := render.Render(o, owner)
		if err != nil {
			return nil, err
		}
		rendered = append(rendered, r)
	}
	render.Sort(rendered)
	revision := render.Revision(rendered)
	book := &ledger.Ledger{Hub: c, Owners: owners}
	records, err := book.Records(ctx, owner)
	if err != nil {
		return nil, err
	}
	var recorded []string
	for _, rec := range records {
		recorded = append(recorded, rec.Spec.Kinds...)
	}
	d := &Desired{Owner: owner, Strategy: p.spec.Strategy, Ignore: ignore,
		Kinds:     render.ParseKinds(render.Kinds(rendered, recorded...)),
		Confirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune], Revision: revision}
	rules := override.Compile(p.spec.Overrides)
	// A plan shows where a division ends, not the replicas a move holds on the way.
	facts := factsOf(ctx, c, *decisions)
	free, err := book.Free(ctx, owner, override.LimitsOf(facts))
	if err != nil {
		return nil, err
	}
	fits := map[string]map[string]division.Fit{}
	for w := range division.Workloads(rendered) {
		fits[w] = ledger.RecordedFits(records, w)
	}
	div, _ := divisionOf(placement, rendered, records, facts, free, fits, owner)
	pass := division.NewPass(rendered, div.Shares)
	for _, cl := range *decisions {
		cd := ClusterDesired{Cluster: cl, Objects: rendered, Revision: revision, Delivered: deliveredKeys(records[cl])}
		if div.Shares != nil {
			if cd.Objects, cd.Err = pass.Apply(rendered, cl); cd.Err == nil {
				cd.Revision = render.Revision(cd.Objects)
			}
		}
		if cd.Err == nil && override.Active(rules, facts[cl]) {
			if cd.Objects, cd.Err = override.ForCluster(rules, facts[cl], cd.Objects); cd.Err == nil {
				cd.Revision = render.Revision(cd.Objects)
			}
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d, nil
}

// deliveredKeys are the render.Keys of the objects a record lists, nil without a record.
func deliveredKeys(rec *flotillav1.Delivery) map[string]bool {
	if rec == nil {
		return nil
	}
	out := map[string]bool{}
	for _, group := range rec.Status.Objects {
		for _, gvk := range render.ParseKinds([]string{group.Kind}) {
			for _, name := range group.Names {
				out[gvk.Group+"/"+gvk.Kind+"/"+group.Namespace+"/"+name] = true
			}
		}
	}
	return out
}
