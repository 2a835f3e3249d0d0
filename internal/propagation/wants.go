package propagation

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// target is what a propagator's pass delivers, before it is made per cluster.
type target struct {
	owner     render.Owner
	placement *flotillav1.Placement
	rules     []override.Rule
	latest    string // the name of the latest revision
	kept      string // latest, once it is kept as a revision; "" when it is not (too large)
	pins      []flotillav1.RevisionPin
	rendered  []*unstructured.Unstructured
	revision  string // rendered's revision (render.Revision)
	// facts are what override rules and the division see of each chosen cluster, read once
	// per pass (factsOf).
	facts map[string]override.Cluster
	// fits are what the chosen clusters are known to fit of each divided workload (fitsOf).
	fits map[string]map[string]division.Fit
}

// factsOf reads what override rules and the division see of each cluster from the hub cache.
func factsOf(ctx context.Context, hub client.Reader, clusters []string) map[string]override.Cluster {
	out := make(map[string]override.Cluster, len(clusters))
	for _, c := range clusters {
		out[c] = override.ClusterFacts(ctx, hub, c)
	}
	return out
}

// wants returns what each chosen cluster should have: the latest revision or the one its
// owner pins it to (spec.revisionPins), its replicas of the workloads its Placement divides, and its override rules.
// A cluster whose pinned revision is gone or whose rules fail is left out (it keeps what it
// has) and reported. A division over clusters with placement limits runs admitted by the
// ledger, so that two owners never both take a cluster's last room.
func (r *Reconciler) wants(ctx context.Context, in *statusInput, t target) map[string]fanout.Want {
	chosen := in.targets
	t.facts = factsOf(ctx, r.Hub, chosen)
	if division.Divides(t.placement.Spec.Replicas, false) {
		// Read before any admission: it may ask the spokes, and admissions wait for each other.
		t.fits = r.fitsOf(ctx, in, t, haveOf(t.rendered, in.records))
	}
	limits := override.LimitsOf(t.facts)
	if len(limits) == 0 || !division.Divides(t.placement.Spec.Replicas, false) {
		return r.wantsWithin(ctx, in, t, nil)
	}
	var want map[string]fanout.Want
	err := r.Ledger.Admit(ctx, t.owner, limits, func(free map[string]division.Usage) map[string]division.Usage {
		want = r.wantsWithin(ctx, in, t, free)
		placed := make(map[string]division.Usage, len(want))
		for c, w := range want {
			placed[c] = division.UsageOf(w.Objects)
		}
		return placed
	})
	if err != nil {
		for _, c := range chosen {
			in.clusterFailed(c, err.Error()) // every cluster keeps what it has
		}
		return map[string]fanout.Want{}
	}
	return want
}

// wantsWithin is wants with what the placement limits of each limited cluster admit (free).
func (r *Reconciler) wantsWithin(ctx context.Context, in *statusInput, t target, free map[string]division.Usage) map[string]fanout.Want {
	chosen := in.targets
	pass := r.divide(ctx, in, t, free)
	want := make(map[string]fanout.Want, len(chosen))
	for _, c := range chosen {
		w, err := t.on(ctx, r.Revisions, c, pass)
		if err != nil {
			// This cluster keeps what it has; the others carry on.
			in.clusterFailed(c, err.Error())
			continue
		}
		if pass.Replicas != nil {
			w.Replicas = ledger.Shares(pass.On(c), fitsOn(t.fits, c))
		}
		if w.Revision != in.revision {
			in.clusterRevision(c, w.Revision)
		}
		want[c] = w
	}
	return want
}

// on returns what cluster c should have: the objects of the revision its owner pins it to
// (spec.revisionPins, loaded from store) or the latest, with its replicas of the divided
// workloads in pass (and the bounds of their HPAs), then its override rules. The controller
// and Preview both make each cluster's objects here. Base names the revision they start from,
// which the cluster's record names with the cluster's changes to it (spec.work).
func (t target) on(ctx context.Context, store *revisions.Store, c string, pass division.Pass) (fanout.Want, error) {
	pin := flotillav1.PinOf(t.pins, c)
	objs, revision, err := revisionFor(ctx, store, t.owner, pin, t.latest, t.rendered, t.revision)
	if err != nil {
		return fanout.Want{}, err // a pinned revision that is not kept
	}
	// The base a record names must exist: the pinned revision, or the latest once kept.
	base := &fanout.Base{Name: t.kept, Digest: revision, Objects: objs}
	if pin != "" && pin != t.latest {
		base.Name = pin
	}
	if len(pass.On(c)) > 0 {
		if objs, err = pass.Apply(objs, c); err != nil {
			return fanout.Want{}, err
		}
		revision = render.Revision(objs)
	}
	if facts := t.facts[c]; override.Active(t.rules, facts) {
		if objs, err = override.ForCluster(t.rules, facts, objs); err != nil {
			return fanout.Want{}, err
		}
		revision = render.Revision(objs)
	}
	return fanout.Want{Objects: objs, Revision: revision, Base: base}, nil
}

// divide returns each chosen cluster's replicas of the divided workloads this pass: their
// division by the Placement's replica policy, with what a cluster that is to run fewer keeps
// until the clusters that gain are Ready (the move is reported meanwhile).
func (r *Reconciler) divide(ctx context.Context, in *statusInput, t target, free map[string]division.Usage) division.Pass {
	div, have := divisionOf(t.placement, t.rendered, in.records, t.facts, free, t.fits, t.owner)
	if div.Shares == nil {
		return division.Pass{}
	}
	for w, msg := range div.Messages {
		in.unplaced = append(in.unplaced, w+": "+msg)
	}
	in.divisions = div.Reports
	var held *division.Pass // the pass with every reduction held, made on the first question
	breakFirst := t.placement.Spec.Moves != nil && t.placement.Spec.Moves.Order == flotillav1.MoveBreakBeforeMake
	replicas, stalled := division.Hold(division.Move{Chosen: in.targets, Shares: div.Shares, Have: have, BreakFirst: breakFirst,
		Ready: func(c string, replicas division.Replicas) bool {
			if held == nil {
				p := division.NewPass(t.rendered, replicas)
				held = &p
			}
			w, err := t.on(ctx, r.Revisions, c, *held)
			if err != nil {
				return false
			}
			res, ok := r.Deliverer.Result(t.owner, c)
			return ok && res.ReadyAt(w.Revision)
		}})
	in.moveStalled = stalled
	return division.NewPass(t.rendered, replicas)
}

// fitsOn returns what cluster c is known to fit of each divided workload.
func fitsOn(fits map[string]map[string]division.Fit, c string) map[string]division.Fit {
	out := map[string]division.Fit{}
	for w, byCluster := range fits {
		if f, ok := byCluster[c]; ok {
			out[w] = f
		}
	}
	return out
}

// divisionOf divides the workloads among rendered over the chosen clusters by the Placement's
// replica policy, within what the limited clusters admit (free) and what clusters are known to
// fit (fits; nil: nothing known), from what the records say each cluster runs now (also
// returned). Its shares are nil when the Placement does not divide
// or nothing is divisible.
func divisionOf(pl *flotillav1.Placement, rendered []*unstructured.Unstructured, records map[string]*flotillav1.Delivery,
	chosen map[string]override.Cluster, free map[string]division.Usage, fits map[string]map[string]division.Fit,
	owner render.Owner) (division.Outcome, division.Replicas) {
	totals := division.Workloads(rendered)
	if !division.Divides(pl.Spec.Replicas, false) || len(totals) == 0 {
		return division.Outcome{}, nil
	}
	in := division.ForPlacement(pl)
	in.Chosen = make(map[string]map[string]string, len(chosen))
	in.Room = make(map[string]map[string]int64, len(chosen))
	for c, facts := range chosen {
		in.Chosen[c], in.Room[c] = facts.Labels, facts.Allocatable
	}
	have := haveOf(rendered, records)
	in.Free, in.Fits, in.Requests, in.Totals, in.Have, in.Seed = free, fits, division.Requests(rendered), totals, have, owner.String()
	return division.Divide(in), have
}

// haveOf is what the records say each cluster runs of the divisible workloads among rendered.
func haveOf(rendered []*unstructured.Unstructured, records map[string]*flotillav1.Delivery) division.Replicas {
	have := division.Replicas{}
	for w := range division.Workloads(rendered) {
		have[w] = ledger.RecordedShares(records, w)
	}
	return have
}
