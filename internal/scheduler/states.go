package scheduler

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// DefaultFailbackAfter is how long a failed-over cluster must be Ready before it gets its
// share back under Automatic failback, when the Placement does not say.
const DefaultFailbackAfter = 10 * time.Minute

// States returns the decisions for the chosen clusters, each with its tier and its state under the
// Placement's moves policy, and how long until a state would change by the clock alone (0:
// never). previous are the decisions recorded before; rebalance says the Placement's
// flotilla.dev/rebalance annotation took a new value (Manual failback). Without
// clusterUnhealthyAfter every chosen cluster is Active: health alone moves nothing.
//
// A chosen cluster whose Ready condition has not been True for clusterUnhealthyAfter is
// FailedOver (from its condition's lastTransitionTime, so a restart of the controller changes
// nothing). Once Ready again it is Returning, and Active after failbackAfter of readiness
// (Automatic) or at the next rebalance (Manual); not Ready meanwhile, it is FailedOver again.
func States(spec flotillav1.PlacementSpec, chosen []string, clusters []flotillav1.Cluster, previous []flotillav1.ClusterDecision,
	now time.Time, rebalance bool) ([]flotillav1.ClusterDecision, time.Duration) {
	out := make([]flotillav1.ClusterDecision, 0, len(chosen))
	byName := make(map[string]*flotillav1.Cluster, len(clusters))
	for i := range clusters {
		byName[clusters[i].Name] = &clusters[i]
	}
	tierOf := func(c string) string {
		var lbls map[string]string
		if cl := byName[c]; cl != nil {
			lbls = cl.Labels
		}
		_, name := TierOf(spec.Tiers, c, lbls)
		return name
	}
	moves := spec.Moves
	if moves == nil || moves.ClusterUnhealthyAfter == nil {
		for _, c := range chosen {
			out = append(out, flotillav1.ClusterDecision{ClusterName: c, Tier: tierOf(c)})
		}
		return out, 0
	}
	was := make(map[string]flotillav1.ClusterDecision, len(previous))
	for _, d := range previous {
		was[d.ClusterName] = d
	}
	var next time.Duration
	soonest := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	for _, c := range chosen {
		d, wait := state(moves, byName[c], was[c], now, rebalance)
		d.ClusterName, d.Tier = c, tierOf(c)
		soonest(wait)
		out = append(out, d)
	}
	return out, next
}

// state is one chosen cluster's decision, and how long until it would change by the clock.
func state(moves *flotillav1.MovePolicy, c *flotillav1.Cluster, prev flotillav1.ClusterDecision, now time.Time, rebalance bool) (flotillav1.ClusterDecision, time.Duration) {
	ready, since, why := readiness(c)
	away := prev.State == flotillav1.DecisionFailedOver || prev.State == flotillav1.DecisionReturning
	switch {
	case !ready && away:
		return keep(prev, flotillav1.DecisionFailedOver, now, "not Ready: "+why), 0
	case !ready:
		until := since.Add(moves.ClusterUnhealthyAfter.Duration)
		if now.Before(until) {
			return flotillav1.ClusterDecision{}, until.Sub(now)
		}
		return decision(flotillav1.DecisionFailedOver, until, fmt.Sprintf("not Ready for more than %s: %s", moves.ClusterUnhealthyAfter.Duration, why)), 0
	case !away:
		return flotillav1.ClusterDecision{}, 0
	case moves.Failback == flotillav1.FailbackManual:
		if rebalance {
			return flotillav1.ClusterDecision{}, 0
		}
		return keep(prev, flotillav1.DecisionReturning, since,
			"Ready again; failback is Manual: give it its share back with kubectl annotate placement NAME --overwrite "+flotillav1.AnnotationRebalance+"=<new value>"), 0
	default:
		after := DefaultFailbackAfter
		if moves.FailbackAfter != nil {
			after = moves.FailbackAfter.Duration
		}
		until := since.Add(after)
		if !now.Before(until) {
			return flotillav1.ClusterDecision{}, 0
		}
		return keep(prev, flotillav1.DecisionReturning, since, fmt.Sprintf("Ready again; its share comes back after %s of readiness", after)), until.Sub(now)
	}
}

// readiness reads a Cluster's Ready condition: whether it is True, since when it is as it is,
// and what it says. A Cluster without one is not Ready since it was created.
func readiness(c *flotillav1.Cluster) (bool, time.Time, string) {
	if c == nil {
		return false, time.Time{}, "the Cluster is gone"
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady)
	if cond == nil {
		return false, c.CreationTimestamp.Time, "not probed yet"
	}
	return cond.Status == metav1.ConditionTrue, cond.LastTransitionTime.Time, cond.Reason + ": " + cond.Message
}

// keep returns a decision in state, keeping since when the cluster was in that state already.
func keep(prev flotillav1.ClusterDecision, s flotillav1.DecisionState, since time.Time, message string) flotillav1.ClusterDecision {
	if prev.State == s && prev.Since != nil {
		since = prev.Since.Time
	}
	return decision(s, since, message)
}

func decision(s flotillav1.DecisionState, since time.Time, message string) flotillav1.ClusterDecision {
	if len(message) > 256 {
		message = message[:253] + "..."
	}
	t := metav1.NewTime(since)
	return flotillav1.ClusterDecision{State: s, Since: &t, Message: message}
}
