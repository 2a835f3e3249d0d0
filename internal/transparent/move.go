package transparent

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
)

// move is how far a change of division may go now. A move makes before it breaks: clusters
// that gain replicas (or a first copy) get them first; clusters that lose replicas keep theirs
// (held) until every other chosen cluster has its copy Ready (kstatus, at the generation
// Flotilla wrote). Copies on clusters that left wait for the same (package fanout). Nothing
// here waits on a timer.
type move struct {
	// held are the chosen clusters that keep their current replicas for now.
	held map[string]int64
	// stalled says what the move waits for ("" when it waits for nothing).
	stalled string
}

// division returns a workload's share of replicas on each chosen cluster and what each
// chosen cluster that has a copy runs now; both nil for an object that is not divided. The
// division is the scheduler's (evenDivision): even, with the remainder kept where it runs.
// What runs where is what the Delivery records say Flotilla wrote there; a record written
// before records kept shares is completed from the cluster's copy.
func (r *Reconciler) division(ctx context.Context, owner render.Owner, u, rendered *unstructured.Unstructured, decisions []string,
	records map[string]*flotillav1.Delivery) (shares, have map[string]int64) {
	total, found, _ := unstructured.NestedInt64(rendered.Object, "spec", "replicas")
	if !found || (r.GVK.Kind != "Deployment" && r.GVK.Kind != "StatefulSet") {
		return nil, nil
	}
	recorded := ledger.RecordedShares(records, render.Key(rendered))
	have = map[string]int64{}
	var unrecorded []string
	for _, c := range decisions {
		if n, ok := recorded[c]; ok {
			have[c] = n
		} else if _, delivered := records[c]; delivered {
			unrecorded = append(unrecorded, c)
		}
	}
	maps.Copy(have, r.replicasOn(ctx, client.ObjectKeyFromObject(u), unrecorded))
	return evenDivision(total, decisions, have, owner.String()), have
}

// evenDivision divides total evenly over clusters with scheduler.Divide: equal weights, no
// bounds, and what runs now as a previous division without a key. A current division that is
// even is kept as it is (nothing moves); any other is replaced by an even one that keeps
// replicas where they run first, the remaining ties broken by a hash of seed and cluster name.
func evenDivision(total int64, clusters []string, have map[string]int64, seed string) map[string]int64 {
	in := scheduler.DivideInput{Total: int32(min(max(total, 0), math.MaxInt32)), Mode: scheduler.ModeWeighted, Seed: seed,
		Previous: &scheduler.Division{Replicas: make(map[string]int32, len(have))}}
	for _, c := range clusters {
		in.Clusters = append(in.Clusters, scheduler.Candidate{Name: c, Weight: 1, Max: scheduler.Unbounded,
			LimitFit: scheduler.Unbounded, Estimate: scheduler.Unbounded})
	}
	for c, n := range have {
		in.Previous.Replicas[c] = int32(min(max(n, 0), math.MaxInt32))
	}
	shares := make(map[string]int64, len(clusters))
	for c, n := range scheduler.Divide(in).Replicas {
		shares[c] = int64(n)
	}
	return shares
}

// planMove decides which chosen clusters must keep their replicas for now. want are the objects each chosen cluster should end with,
// shares and have a divided workload's replicas there, in the end and now.
func (r *Reconciler) planMove(owner render.Owner, want map[string]*unstructured.Unstructured, shares, have map[string]int64,
	decisions, delivered []string) move {
	var shrinking, notReady []string
	for _, c := range decisions {
		if n, ok := have[c]; ok && shares[c] < n {
			shrinking = append(shrinking, c)
			continue
		}
		if !r.readyAt(owner, c, want[c]) {
			notReady = append(notReady, c)
		}
	}
	leaving := 0
	for _, c := range delivered {
		if !slices.Contains(decisions, c) {
			leaving++
		}
	}
	var m move
	if len(notReady) == 0 {
		return m // the shrinking clusters shrink now; once they are Ready, copies that left go
	}
	sort.Strings(notReady)
	if len(shrinking) > 0 {
		m.held = make(map[string]int64, len(shrinking))
		for _, c := range shrinking {
			m.held[c] = have[c]
		}
	}
	if len(shrinking) > 0 || leaving > 0 {
		m.stalled = fmt.Sprintf("replicas stay where they run until the copies on %s are Ready (make before break)", strings.Join(notReady, ", "))
	}
	return m
}

// readyAt reports whether a cluster's copy is delivered as obj and Ready there.
func (r *Reconciler) readyAt(owner render.Owner, cluster string, obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	res, ok := r.Deliverer.Result(owner, cluster)
	return ok && res.Complete && res.Revision == obj.GetAnnotations()[flotillav1.AnnotationHash] && res.Ready >= res.Applied && res.Applied > 0
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
		if n, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); found {
			out[c] = n
		}
	}
	return out
}
