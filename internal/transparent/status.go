package transparent

import (
	"maps"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// notSummed are integer status fields that are not counts.
var notSummed = map[string]bool{"observedGeneration": true, "collisionCount": true}

// updatedCounts are the counts of a workload's pods at its latest template: a copy a rollout
// has not reached yet has none (behind), so that `kubectl rollout status` on the hub waits for
// the fleet's rollout.
var updatedCounts = map[string]bool{"updatedReplicas": true, "updatedNumberScheduled": true}

// spokeCopy is a workload's copy on one cluster; behind says a rollout holds the cluster at an
// older revision than the hub object's.
type spokeCopy struct {
	cluster string
	obj     *unstructured.Unstructured
	behind  bool
}

// aggregate returns the fleet-wide status of a workload from its spoke copies: integer counts
// summed, each condition True only if it is True on every cluster (otherwise the first other
// cluster's reason and message, prefixed with the cluster's name), observedGeneration the hub's
// generation once every copy has observed its own. previous is the hub object's current status.
//
// wanted, for a divided workload, is each chosen cluster's share in the current division (nil
// for one that is not divided): the counts of replicas that serve (capped, below) are then
// counted on each cluster only up to its share, so that the hub never shows more ready than
// desired (see fleetCounts and the FleetSurplus condition).
func aggregate(copies []spokeCopy, hubGeneration int64, previous map[string]any, wanted map[string]int64) map[string]any {
	out := map[string]any{}
	var surplus surplusCounter
	type cond struct {
		all   bool
		first map[string]any
		other map[string]any
		n     int
	}
	conds := map[string]*cond{}
	var order []string
	caughtUp := len(copies) > 0
	for _, c := range copies {
		status, _, _ := unstructured.NestedMap(c.obj.Object, "status")
		observed, _, _ := unstructured.NestedInt64(c.obj.Object, "status", "observedGeneration")
		if observed < c.obj.GetGeneration() {
			caughtUp = false
		}
		want, capped := wantedOn(c, wanted)
		for k, v := range status {
			if n, ok := v.(int64); ok && !notSummed[k] {
				if capped && fleetCounts[k] {
					n = min(n, want)
				}
				if c.behind && updatedCounts[k] {
					n = 0
				}
				sum, _ := out[k].(int64)
				out[k] = sum + n
			}
		}
		if capped {
			ready, _, _ := unstructured.NestedInt64(c.obj.Object, "status", "readyReplicas")
			surplus.add(c.cluster, ready, want)
		}
		list, _, _ := unstructured.NestedSlice(c.obj.Object, "status", "conditions")
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			t, _ := m["type"].(string)
			cc, ok := conds[t]
			if !ok {
				cc = &cond{all: true, first: m}
				conds[t] = cc
				order = append(order, t)
			}
			cc.n++
			if m["status"] != "True" {
				cc.all = false
				if cc.other == nil {
					o := maps.Clone(m)
					if msg, _ := o["message"].(string); msg != "" {
						o["message"] = c.cluster + ": " + msg
					}
					cc.other = o
				}
			}
		}
	}
	if sc := surplus.condition(); sc != nil {
		conds[conditionFleetSurplus] = &cond{all: true, first: sc, n: len(copies)}
		order = append(order, conditionFleetSurplus)
	}
	sort.Strings(order)
	var conditions []any
	for _, t := range order {
		cc := conds[t]
		c := cc.first
		if !cc.all || cc.n < len(copies) {
			c = cc.other
			if c == nil {
				c = map[string]any{"type": t, "status": "Unknown", "reason": "NotReportedEverywhere"}
			}
		}
		conditions = append(conditions, c)
	}
	if len(conditions) > 0 {
		out["conditions"] = conditions
	}
	switch {
	case caughtUp:
		out["observedGeneration"] = hubGeneration
	case previous["observedGeneration"] != nil:
		out["observedGeneration"] = previous["observedGeneration"]
	}
	return out
}
