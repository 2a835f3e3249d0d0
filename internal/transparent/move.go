package transparent

import (
	"context"
	"maps"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// runs is what the object's copies run now and fit, read before a division (and before any
// admission: finding what a cluster fits may ask it).
type runs struct {
	// have is what each chosen cluster runs: its record's share, else its copy's replicas.
	have map[string]int64
	// fits and recheck are fanout.Fits's.
	fits    map[string]map[string]division.Fit
	recheck time.Duration
}

// runsOf reads what the object's copies on the chosen clusters run now and fit.
func (r *Reconciler) runsOf(ctx context.Context, u, rendered *unstructured.Unstructured, placement *flotillav1.Placement,
	decisions []string, records map[string]*flotillav1.Delivery, facts map[string]override.Cluster) runs {
	key := render.Key(rendered)
	if _, divisible := division.Workloads([]*unstructured.Unstructured{rendered})[key]; !divisible || !division.Divides(placement.Spec.Replicas, true) {
		return runs{}
	}
	have, unrecorded := recordedShares(key, decisions, records)
	maps.Copy(have, r.replicasOn(ctx, client.ObjectKeyFromObject(u), unrecorded))
	room := make(map[string]map[string]int64, len(decisions))
	for _, c := range decisions {
		room[c] = facts[c].Allocatable
	}
	fits, recheck := r.fanout.Fits(ctx, records, division.Replicas{key: have}, []*unstructured.Unstructured{rendered}, room, fanout.UnschedulableAfter(placement))
	return runs{have: have, fits: fits, recheck: recheck}
}

// recordedShares is what the records say each chosen cluster runs of the workload key, and
// the clusters delivered to whose record keeps no share (written before records kept them).
func recordedShares(key string, decisions []string, records map[string]*flotillav1.Delivery) (have map[string]int64, unrecorded []string) {
	recorded := ledger.RecordedShares(records, key)
	have = map[string]int64{}
	for _, c := range decisions {
		if n, ok := recorded[c]; ok {
			have[c] = n
		} else if _, delivered := records[c]; delivered {
			unrecorded = append(unrecorded, c)
		}
	}
	return have, unrecorded
}

// moved is what divide found for one pass.
type moved struct {
	// pass is the object's replicas on each chosen cluster (none when it is not divided).
	pass division.Pass
	// shares are what the division wants on each chosen cluster, before a move holds any
	// reduction (nil when it is not divided): the fleet-wide status counts against them.
	shares map[string]int64
	// stalled is what its move waits for, unplaced why some replicas have no cluster ("" when
	// nothing waits, or all have one).
	stalled, unplaced string
	// fits are what each cluster is known to fit of it (moves.unschedulableAfter), recorded
	// with its share; recheck is when to look at a copy short of Available again (0: no need).
	fits    map[string]division.Fit
	recheck time.Duration
}

// divide returns the object's division this pass (moved). The division follows the Placement's replica policy, even when it
// sets none, from what each cluster runs now, and a move makes before it breaks: a cluster
// that is to run fewer replicas keeps what it runs until every other chosen cluster has its
// copy Ready (kstatus, at the generation Flotilla wrote; package division). Copies on clusters
// that left wait for the same (package fanout). Nothing here waits on a timer. What runs where
// is what the Delivery records say Flotilla wrote there; a record written before records kept
// shares is completed from the cluster's copy. hpas are the HPAs of the same Placement that
// scale the object (autoscale.go): they hand its replicas over to the clusters' HPAs. now is what
// the copies run and fit (runsOf); free is what the limited clusters' placement limits admit
// (nil: no limits).
func (r *Reconciler) divide(ctx context.Context, owner render.Owner, u, rendered *unstructured.Unstructured, placement *flotillav1.Placement,
	decisions []string, records map[string]*flotillav1.Delivery, rules []override.Rule, facts map[string]override.Cluster,
	hpas []*unstructured.Unstructured, now runs, free map[string]division.Usage) moved {
	key := render.Key(rendered)
	div, divided := divisionOf(owner, rendered, placement, decisions, facts, now, free)
	if !divided {
		return moved{}
	}
	have := now.have
	scope := append([]*unstructured.Unstructured{rendered}, hpas...)
	var heldPass *division.Pass // the pass with every reduction held, made on the first question
	breakFirst := placement.Spec.Moves != nil && placement.Spec.Moves.Order == flotillav1.MoveBreakBeforeMake
	held, stalled := division.Hold(division.Move{Chosen: decisions, Shares: div.Shares, Have: division.Replicas{key: have}, BreakFirst: breakFirst,
		Ready: func(c string, held division.Replicas) bool {
			if heldPass == nil {
				p := division.NewPass(scope, held)
				heldPass = &p
			}
			objs, failures, err := perCluster(rules, facts, rendered, []string{c}, *heldPass)
			return err == nil && failures[c] == "" && r.readyAt(owner, c, objs[c])
		}})
	return moved{pass: division.NewPass(scope, held), shares: sharesOf(div.Shares, key, decisions), stalled: stalled, unplaced: div.Messages[key], fits: now.fits[key], recheck: now.recheck}
}

// divisionOf divides the object's replicas over decisions by the Placement's replica policy,
// even when it sets none, from what each cluster runs now and fits (now), within what the
// limited clusters admit (free; nil: no limits). divided is false when the object is not a
// workload the Placement divides.
func divisionOf(owner render.Owner, rendered *unstructured.Unstructured, placement *flotillav1.Placement, decisions []string,
	facts map[string]override.Cluster, now runs, free map[string]division.Usage) (div division.Outcome, divided bool) {
	key := render.Key(rendered)
	total, found := division.Workloads([]*unstructured.Unstructured{rendered})[key]
	if !found || !division.Divides(placement.Spec.Replicas, true) {
		return division.Outcome{}, false
	}
	in := division.ForPlacement(placement)
	in.Chosen = make(map[string]map[string]string, len(decisions))
	in.Room = make(map[string]map[string]int64, len(decisions))
	for _, c := range decisions {
		in.Chosen[c], in.Room[c] = facts[c].Labels, facts[c].Allocatable
	}
	in.Free, in.Requests, in.Totals = free, division.Requests([]*unstructured.Unstructured{rendered}), map[string]int64{key: total}
	in.Have, in.Seed = division.Replicas{key: now.have}, owner.String()
	in.Fits = now.fits
	return division.Divide(in), true
}

// readyAt reports whether a cluster's copy is delivered as obj and Ready there.
func (r *Reconciler) readyAt(owner render.Owner, cluster string, obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	res, ok := r.Deliverer.Result(owner, cluster)
	return ok && res.ReadyAt(render.HashOf(obj))
}

// replicasOn reads spec.replicas of the object's copies on clusters from the spoke caches; a
// cluster whose copy cannot be read is left out.
func (r *Reconciler) replicasOn(ctx context.Context, key client.ObjectKey, clusters []string) map[string]int64 {
	out := make(map[string]int64, len(clusters))
	for _, c := range clusters {
		live, ok := r.spokeCopy(ctx, c, key)
		if !ok {
			continue
		}
		// What Flotilla wrote: the share annotation of a copy an HPA scales, else its replicas.
		if share, err := strconv.ParseInt(live.GetAnnotations()[flotillav1.AnnotationShare], 10, 64); err == nil {
			out[c] = share
		} else if n, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); found {
			out[c] = n
		}
	}
	return out
}

// sharesOf returns a divided workload's share on each chosen cluster (0 where the division
// gives it none).
func sharesOf(shares division.Replicas, key string, decisions []string) map[string]int64 {
	out := make(map[string]int64, len(decisions))
	for _, c := range decisions {
		out[c] = shares[key][c]
	}
	return out
}
