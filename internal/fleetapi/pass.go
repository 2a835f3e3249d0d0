package fleetapi

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// rgdPass is one pass over an RGD served by placer: the RGD's per-cluster step, and what its
// report needs of it.
type rgdPass struct {
	r         *Reconciler
	rgd       *kro.ResourceGraphDefinition
	placer    *flotillav1.APIPropagation
	placement *flotillav1.Placement
	owner     render.Owner
	newest    rgdRevision
	// pull is what planning a pull cluster needs: the records the pass read (Running).
	pull pullPass
	// read reads what one chosen cluster serves (the controller's readCluster; a plan's
	// clients of its own); result is the deliverer's latest result on a cluster (a plan has
	// none).
	read   func(ctx context.Context, cluster string) clusterRead
	result func(cluster string) (deliver.Result, bool)
	// reads are what Running read of each chosen cluster, plans what Compute planned there.
	reads map[string]clusterRead
	plans map[string]clusterPlan
}

// newPass is the pass over rgd under placer and its Placement as the controller runs it, and
// the Pass the runner runs with it.
func (r *Reconciler) newPass(rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation, placement *flotillav1.Placement) (*rgdPass, ownerpass.Pass, error) {
	p := &rgdPass{r: r, rgd: rgd, placer: placer, placement: placement, owner: ownerOf(rgd.Name)}
	p.read = func(ctx context.Context, c string) clusterRead {
		return r.readCluster(ctx, p.newest, p.owner, c, p.pull)
	}
	p.result = func(c string) (deliver.Result, bool) { return r.Deliverer.Result(p.owner, c) }
	pass, err := p.pass()
	return p, pass, err
}

// pass is what the runner runs: the RGD's spec as its revision, its pins and rollout controls,
// its holds, and how its CRDs are delivered.
func (p *rgdPass) pass() (ownerpass.Pass, error) {
	kept, hash, err := revisionObject(p.rgd)
	if err != nil {
		return ownerpass.Pass{}, err
	}
	p.newest = rgdRevision{rgd: p.rgd}
	if p.r.Revisions != nil {
		p.newest.name = revisions.Name(p.owner, hash)
	}
	rgd, placer := p.rgd, p.placer
	strategy := strategyOf(placer, rgd.Name)
	return ownerpass.Pass{
		Owner: ledger.Owner{Owner: p.owner, APIVersion: kro.GroupVersion.String(), ObjectKind: rgdKind, UID: rgd.UID,
			Placement: PlacementOf(placer)},
		Object: rgd, Placement: p.placement,
		Objects: []*unstructured.Unstructured{kept}, Revision: hash,
		Pins:     pinsOf(placer, rgd.Name),
		Approved: rgd.Annotations[flotillav1.AnnotationApprove], Undo: rgd.Annotations[flotillav1.AnnotationUndo],
		Guard: guardOf(placer, rgd.Name, p.placement),
		Prune: true, Kinds: []string{render.KindString(crdKind)}, Strategy: strategy,
		Declared: flotillav1.PropagationStrategy{Deletion: strategy.Deletion, Conflict: strategy.Conflict}, // a pull cluster's agent's
		Clusters: p, KeepFirst: true, ReleaseAtOnce: true,
	}, nil
}

// Running reads what each chosen cluster serves before anything is compiled: the rollout gate
// goes by it (servedRunning), and the history keeps it besides the pins (revisionsInUse).
func (p *rgdPass) Running(ctx context.Context, chosen []string, records map[string]*flotillav1.Delivery) (map[string]fanout.Running, []string, error) {
	p.pull = pullPass{records: records, tenancy: p.placer.Spec.Tenancy}
	p.reads = make(map[string]clusterRead, len(chosen))
	for _, c := range chosen {
		p.reads[c] = p.read(ctx, c)
	}
	keep, err := p.r.revisionsInUse(ctx, p.owner, p.reads)
	if err != nil {
		return nil, nil, err
	}
	carried := func(revision string) (string, bool) { return p.r.carried.get(p.rgd.Name, revision) }
	return servedRunning(p.reads, carried, p.result), slices.Sorted(maps.Keys(keep)), nil
}

// Compute compiles each read cluster once, for the revision it is to serve (planPins): a
// cluster where nothing may be delivered (the RGD does not compile there, a breaking change, a
// conflict, a pinned revision not kept) is Failed with its row's message, and keeps what it
// serves.
func (p *rgdPass) Compute(ctx context.Context, in percluster.Input) percluster.Outcome {
	personal := func(c string) string { return p.placer.Spec.PinOf(p.rgd.Name, c) }
	p.plans = p.r.planPins(ctx, p.reads, p.newest, in.LatestName, p.owner, in.Pins, personal, p.pull)
	p.r.carried.replace(p.rgd.Name, carriedBy(p.plans, in.LatestName))
	out := percluster.Outcome{Want: map[string]percluster.Want{}, Failed: map[string]string{}}
	for c, plan := range p.plans {
		if plan.want == nil {
			out.Failed[c] = fmt.Sprintf("%s (%s): %s", plan.row.Phase, plan.row.Reason, plan.row.Message)
			continue
		}
		w := *plan.want
		w.Pinned = plan.pinned
		out.Want[c] = w
	}
	return out
}
