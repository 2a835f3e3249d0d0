package transparent

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// notSummed are integer status fields that are not counts.
var notSummed = map[string]bool{"observedGeneration": true, "collisionCount": true}

// spokeCopy is a workload's copy on one cluster.
type spokeCopy struct {
	cluster string
	obj     *unstructured.Unstructured
}

// aggregate returns the fleet-wide status of a workload from its spoke copies: integer counts
// summed, each condition True only if it is True on every cluster (otherwise the first other
// cluster's reason and message, prefixed with the cluster's name), observedGeneration the hub's
// generation once every copy has observed its own. previous is the hub object's current status.
func aggregate(copies []spokeCopy, hubGeneration int64, previous map[string]any) map[string]any {
	out := map[string]any{}
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
		for k, v := range status {
			if n, ok := v.(int64); ok && !notSummed[k] {
				sum, _ := out[k].(int64)
				out[k] = sum + n
			}
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
					o := map[string]any{}
					for k, v := range m {
						o[k] = v
					}
					if msg, _ := o["message"].(string); msg != "" {
						o["message"] = c.cluster + ": " + msg
					}
					cc.other = o
				}
			}
		}
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
