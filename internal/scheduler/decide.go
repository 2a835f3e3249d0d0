package scheduler

import (
	"fmt"
	"slices"
	"time"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Decide returns a Placement's choice (Schedule) and its decisions (States), and how long
// until a state would change by the clock alone. previous are the clusters chosen before,
// decisions what the status records. A selector that does not parse is an error
// (ValidateSelectors): the caller keeps the clusters chosen before.
//
// With clusterCount, a chosen cluster that is FailedOver or Returning does not count toward
// it: another eligible cluster is chosen to stand in for it (its decision's replaces names the
// cluster away), filled before anything leaves the cluster away. Once that cluster is Active
// again the stand-in is not sticky any more, so the original keeps its place and the stand-in
// is let go (its objects leave once the others are Ready). Without clusterCount nothing stands
// in: the other chosen clusters take a divided workload's share.
func Decide(spec flotillav1.PlacementSpec, clusters []flotillav1.Cluster, previous []string, decisions []flotillav1.ClusterDecision,
	seed string, now time.Time, rebalance bool) (Result, []flotillav1.ClusterDecision, time.Duration, error) {
	if err := ValidateSelectors(spec); err != nil {
		return Result{}, nil, 0, err
	}
	standIns := map[string]string{} // stand-in → the cluster it replaces, as recorded
	for _, d := range decisions {
		if d.Replaces != "" {
			standIns[d.ClusterName] = d.Replaces
		}
	}
	// First without the stand-ins' stickiness: the originals keep their places.
	sticky := slices.DeleteFunc(slices.Clone(previous), func(c string) bool { _, s := standIns[c]; return s })
	res, err := Schedule(spec, clusters, sticky, seed)
	if err != nil {
		return res, nil, 0, err
	}
	ds, requeue := States(spec, res.Clusters, clusters, decisions, now, rebalance)
	var away []string
	for _, d := range ds {
		if d.State == flotillav1.DecisionFailedOver || d.State == flotillav1.DecisionReturning {
			away = append(away, d.ClusterName)
		}
	}
	if spec.ClusterCount == nil || len(away) == 0 {
		return res, ds, requeue, nil
	}
	// Again with room for a stand-in per cluster away; stand-ins for a cluster still away
	// stay sticky.
	widened := spec
	n := *spec.ClusterCount + int32(len(away))
	widened.ClusterCount = &n
	for c, replaced := range standIns {
		if slices.Contains(away, replaced) {
			sticky = append(sticky, c)
		}
	}
	wide, err := Schedule(widened, clusters, sticky, seed)
	if err != nil {
		return res, ds, requeue, nil // the choice without stand-ins holds
	}
	ds, requeue = States(spec, wide.Clusters, clusters, decisions, now, rebalance)
	assignStandIns(ds, res.Clusters, away, standIns)
	wide.Reason = res.Reason
	wide.Message = fmt.Sprintf("%s; %d away (FailedOver or Returning) with a stand-in each", res.Message, len(away))
	return wide, ds, requeue, nil
}

// assignStandIns names, on each decision of a cluster chosen only to stand in (not among
// chosen), the cluster away it replaces: the one it replaced before if that is still away,
// else the first away cluster without a stand-in.
func assignStandIns(ds []flotillav1.ClusterDecision, chosen, away []string, before map[string]string) {
	covered := map[string]bool{}
	var fresh []int
	for i := range ds {
		c := ds[i].ClusterName
		if slices.Contains(chosen, c) {
			continue
		}
		if r := before[c]; slices.Contains(away, r) && !covered[r] {
			ds[i].Replaces, covered[r] = r, true
			continue
		}
		fresh = append(fresh, i)
	}
	for _, i := range fresh {
		for _, r := range away {
			if !covered[r] {
				ds[i].Replaces, covered[r] = r, true
				break
			}
		}
	}
}
