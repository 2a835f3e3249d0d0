package ownerpass

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/holds"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// hubReadTimeout bounds the reads of the hub cache a pass makes besides the records (the
// Clusters' facts): a cache that cannot sync costs that read, not the pass of every owner.
const hubReadTimeout = 10 * time.Second

// Runner runs the passes of the owners of one controller.
type Runner struct {
	// Hub reads Clusters (their facts) through the manager's cache, and sets a rollout's undo
	// on its owner (onFailure: Rollback).
	Hub    client.Client
	Fanout *fanout.Fanout
	// Revisions keeps each owner's revisions; nil keeps none (then nothing can be pinned and
	// a rollout halts).
	Revisions *revisions.Store

	mu        sync.Mutex
	rollouts  map[render.Owner]remembered // what the rollout gate remembers of each owner (gate.go)
	finalized map[types.UID]time.Time     // finalizers added within the cache's lag (reconcile.go)
}

// Forget drops what the runner remembers of an owner that is gone.
func (r *Runner) Forget(owner render.Owner) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.rollouts, owner)
	r.mu.Unlock()
}

// Run runs one pass of an owner: it reads the owner's records, keeps its latest revision,
// asks the rollout gate which clusters may take it, computes what each chosen cluster gets,
// checks the fleet-wide holds and hands the clusters' objects to the fan-out. A failure on one
// cluster (its overrides, its pinned revision, its record) leaves that cluster as it is and
// the others carry on; err is what stops the whole pass (the records or a revision cannot be
// read).
func (r *Runner) Run(ctx context.Context, p Pass) (Result, error) {
	owner := p.Owner.Owner
	var res Result
	records, err := r.Fanout.Ledger.Records(ctx, owner)
	if err != nil {
		return res, err
	}
	res.Records = records
	decisions := Decisions(p.Placement)
	guard := p.Guard
	guard.Placement, guard.Chosen, guard.Delivered = p.Placement, decisions, ledger.Clusters(records)
	if h := holds.Check(guard); h != nil && !h.Deliver {
		res.Hold = h
		return res, nil
	}
	in := p.input(decisions, r.facts(ctx, decisions))
	running, alsoKeep, err := r.running(ctx, p, records, decisions)
	if err != nil {
		return res, err
	}
	if in.Latest.Name, res.NoHistory, err = r.keep(ctx, p, running, alsoKeep); err != nil {
		return res, err
	}
	res.LatestName, res.Kept = in.LatestName, in.Latest.Name
	in.Pins = r.gate(ctx, p, in, running, &res)
	res.Pins = in.Pins
	if err := r.compute(ctx, p, in, &res); err != nil {
		return res, err
	}
	// An HPA withheld where its workload has no share leaves those clusters: they are not
	// chosen, and the holds see them leave.
	res.Chosen = res.Computed.Clusters(decisions)
	guard.Chosen = res.Chosen
	h := holds.Check(guard)
	if h != nil && !h.Deliver {
		res.Hold = h
		return res, nil
	}
	if h != nil {
		res.Held = h.Message // only removals wait
	}
	res.Synced = r.Fanout.Sync(ctx, fanout.Pass{Owner: p.Owner, Records: records, Chosen: res.Chosen, Want: res.Computed.Want,
		Kinds: p.Kinds, Prune: p.Prune, Strategy: p.Strategy, Ignore: p.Ignore, Held: res.Held, Confirm: guard.Leaving,
		Declared: p.Declared, WorkAhead: p.Placement.Spec.Rollout != nil && p.Clusters == nil, ReleaseAtOnce: p.ReleaseAtOnce})
	res.Err = errors.Join(res.Err, res.Synced.Err)
	return res, nil
}

// facts reads what override rules and the division see of each chosen cluster, within
// hubReadTimeout.
func (r *Runner) facts(ctx context.Context, clusters []string) map[string]override.Cluster {
	ctx, cancel := context.WithTimeout(ctx, hubReadTimeout)
	defer cancel()
	return fanout.Facts(ctx, r.Hub, clusters)
}

// running is what each chosen cluster runs of the owner: as its records say, or as the kind's
// own step reads it (Pass.Clusters), with the revisions that step keeps besides.
func (r *Runner) running(ctx context.Context, p Pass, records map[string]*flotillav1.Delivery, chosen []string) (map[string]fanout.Running, []string, error) {
	if p.Clusters != nil {
		return p.Clusters.Running(ctx, chosen, records)
	}
	return r.Fanout.Running(p.Owner.Owner, records, chosen), nil, nil
}

// compute computes what each chosen cluster gets, with the kind's own step (Pass.Clusters) or
// package percluster (through the fan-out, after gather); err is what stops the pass.
func (r *Runner) compute(ctx context.Context, p Pass, in percluster.Input, res *Result) error {
	if p.Clusters != nil {
		res.Computed = p.Clusters.Compute(ctx, in)
		return nil
	}
	if err := r.gather(ctx, p, &in, res); err != nil {
		return err
	}
	var err error
	if res.Computed, err = r.Fanout.Wants(ctx, in, res.Records); err != nil {
		// Every cluster keeps what it has, and stays chosen (a cluster in neither Want nor
		// Failed would leave); the pass is retried.
		res.Computed.Failed = map[string]string{}
		for _, c := range in.Chosen {
			res.Computed.Failed[c] = err.Error()
		}
		res.Unmade, res.Err = err, err
	}
	return nil
}

// keep has the owner's objects kept as its latest revision (once per change, stored aside:
// revisions.Store.SaveAside, unless Pass.KeepFirst), with the revisions pins name, those the
// chosen clusters run, which a rollout holds clusters at, and those the kind's step keeps
// besides (also). It returns the revision's name, or why it is not kept (a revision too large,
// or no store): the owner delivers without history then.
func (r *Runner) keep(ctx context.Context, p Pass, running map[string]fanout.Running, also []string) (name, notKept string, err error) {
	if len(p.Objects) == 0 {
		return "", "", nil // an empty selection is held, not a revision
	}
	if r.Revisions == nil {
		return "", "this hub keeps no revisions", nil
	}
	keep := map[string]bool{}
	for _, pin := range p.Pins {
		keep[pin.Revision] = true
	}
	for _, run := range running {
		keep[run.Revision] = true
	}
	for _, name := range also {
		keep[name] = true
	}
	if target, _, ok := flotillav1.ParseUndo(p.Undo); ok {
		keep[target] = true // a rollout undone holds clusters at it
	}
	if p.KeepFirst {
		name, err = r.Revisions.Save(ctx, p.Owner, p.Revision, p.Objects, p.Sources, keep)
	} else {
		name, err = r.Revisions.SaveAside(p.Owner, p.Revision, p.Objects, p.Sources, keep)
	}
	if revisions.NotKept(err) {
		return "", err.Error(), nil
	}
	return name, "", err
}

// gather completes the per-cluster input: the revisions pins hold clusters at, what the
// records say each cluster runs of the divided workloads (and what the kind adds: Pass.Gather),
// and what each cluster fits of them (which may ask the spokes).
func (r *Runner) gather(ctx context.Context, p Pass, in *percluster.Input, res *Result) error {
	if len(in.Pins) > 0 {
		if r.Revisions == nil {
			return fmt.Errorf("%s %s/%s holds clusters at kept revisions (pins, or a rollout), but this hub keeps no revisions",
				in.Owner.Kind, in.Owner.Namespace, in.Owner.Name)
		}
		in.Pinned = r.Revisions.Pinned(ctx, in.Owner, in.Pins, in.LatestName)
	}
	in.Have = percluster.HaveOf(in.Latest.Objects, res.Records)
	if p.Gather != nil {
		recheck, err := p.Gather(ctx, in, res.Records, true)
		if err != nil {
			return err
		}
		res.Recheck = earliest(res.Recheck, recheck)
	}
	if in.Divides() && in.Fits == nil {
		// Read before any admission: it may ask the spokes, and admissions wait for each other.
		fits, recheck := r.Fanout.Fits(ctx, res.Records, in.Have, in.Latest.Objects, in.Facts, fanout.UnschedulableAfter(in.Placement))
		in.Fits = fits
		res.Recheck = earliest(res.Recheck, recheck)
	}
	return nil
}

// input is the per-cluster computation's input as the pass itself says it, over the chosen
// clusters with their facts; pins, what clusters run and fit are gathered after.
func (p Pass) input(decisions []string, facts map[string]override.Cluster) percluster.Input {
	owner := p.Owner.Owner
	return percluster.Input{Owner: owner, Placement: p.Placement, Chosen: decisions, DivideByDefault: p.DivideByDefault,
		Latest: percluster.Revision{Digest: p.Revision, Objects: p.Objects}, LatestName: revisions.Name(owner, p.Revision),
		Rules: p.Rules, Facts: facts}
}
