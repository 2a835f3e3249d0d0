package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Result is a scheduling decision.
type Result struct {
	// Clusters are the chosen cluster names, sorted.
	Clusters []string
	// Reason and Message explain the result for the Scheduled condition.
	Reason  string
	Message string
}

// Schedule returns the clusters spec chooses among clusters, given the names chosen before;
// seed (the Placement's UID) breaks ties of clusterCount without favouring a name. An invalid
// label selector is an error (the API's validation makes it rare).
func Schedule(spec flotillav1.PlacementSpec, clusters []flotillav1.Cluster, previous []string, seed string) (Result, error) {
	var selector labels.Selector
	if spec.ClusterSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(spec.ClusterSelector)
		if err != nil {
			return Result{}, fmt.Errorf("clusterSelector: %w", err)
		}
		selector = s
	}
	named := map[string]bool{}
	for _, n := range spec.ClusterNames {
		named[n] = true
	}
	wasChosen := map[string]bool{}
	for _, n := range previous {
		wasChosen[n] = true
	}
	var chosen, excluded []string
	for i := range clusters {
		c := &clusters[i]
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		if !named[c.Name] && (selector == nil || !selector.Matches(labels.Set(c.Labels))) {
			continue
		}
		if why := exclusion(c, spec.Tolerations, wasChosen[c.Name]); why != "" {
			excluded = append(excluded, c.Name+" ("+why+")")
			continue
		}
		chosen = append(chosen, c.Name)
	}
	eligible := len(chosen)
	if spec.ClusterCount != nil {
		chosen = pickN(chosen, clusters, spec.Tiers, wasChosen, int(*spec.ClusterCount), seed)
	}
	sort.Strings(chosen)
	sort.Strings(excluded)
	switch {
	case len(chosen) > 0:
		msg := fmt.Sprintf("%d clusters chosen", len(chosen))
		reason := flotillav1.ReasonClustersSelected
		if n := spec.ClusterCount; n != nil {
			msg = fmt.Sprintf("%d of %d eligible clusters chosen (clusterCount %d)", len(chosen), eligible, *n)
			if eligible < int(*n) {
				reason = flotillav1.ReasonClusterCountNotMet
			}
		}
		if len(excluded) > 0 {
			msg += "; excluded: " + summarize(excluded)
		}
		return Result{Clusters: chosen, Reason: reason, Message: msg}, nil
	case len(excluded) > 0:
		return Result{Reason: flotillav1.ReasonClustersExcluded,
			Message: "clusters match but none may take placements: " + summarize(excluded)}, nil
	default:
		return Result{Reason: flotillav1.ReasonNoClustersMatch, Message: noMatchMessage(spec, clusters)}, nil
	}
}

// exclusion says why a matching cluster is not chosen, or "" if it is.
func exclusion(c *flotillav1.Cluster, tolerations []flotillav1.Toleration, wasChosen bool) string {
	for _, t := range c.Spec.Taints {
		if tolerated(t, tolerations) {
			continue
		}
		if t.Effect == flotillav1.TaintEffectNoExecute {
			return "taint " + taintString(t)
		}
		if !wasChosen {
			return "taint " + taintString(t)
		}
	}
	if c.Spec.Unschedulable && !wasChosen {
		return "cordoned"
	}
	return ""
}

// Tolerates tells whether a Placement's tolerations tolerate taint, as scheduling judges it.
func Tolerates(tolerations []flotillav1.Toleration, taint flotillav1.ClusterTaint) bool {
	return tolerated(taint, tolerations)
}

func tolerated(taint flotillav1.ClusterTaint, tolerations []flotillav1.Toleration) bool {
	return slices.ContainsFunc(tolerations, func(t flotillav1.Toleration) bool {
		if t.Effect != "" && t.Effect != taint.Effect {
			return false
		}
		if t.Operator == flotillav1.TolerationOpExists {
			return t.Key == "" || t.Key == taint.Key
		}
		return t.Key == taint.Key && t.Value == taint.Value
	})
}

func taintString(t flotillav1.ClusterTaint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// summarize lists at most five items, so a condition message stays short in a large fleet.
func summarize(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(" and %d more", len(items)-5)
}

func noMatchMessage(spec flotillav1.PlacementSpec, clusters []flotillav1.Cluster) string {
	known := map[string]bool{}
	for _, c := range clusters {
		known[c.Name] = true
	}
	var missing []string
	for _, n := range spec.ClusterNames {
		if !known[n] {
			missing = append(missing, n)
		}
	}
	msg := fmt.Sprintf("no cluster of %d is named in clusterNames or matches clusterSelector", len(clusters))
	if len(missing) > 0 {
		msg += "; unknown cluster names: " + summarize(missing)
	}
	return msg
}
