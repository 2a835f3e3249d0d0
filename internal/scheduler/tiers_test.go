package scheduler

import (
	"slices"
	"testing"
	"time"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestTiers(t *testing.T) {
	onprem := map[string]string{"site": "onprem"}
	fleet := []flotillav1.Cluster{cluster("a", onprem, cpus("2")), cluster("b", nil, cpus("64")), cluster("c", onprem, cpus("4"))}
	spec := count(2)
	spec.Tiers = []flotillav1.ClusterTier{{Name: "onprem", ClusterSelector: selector("site", "onprem")}}

	got, err := Schedule(spec, fleet, []string{"b"}, "seed")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Clusters, []string{"a", "c"}) {
		t.Errorf("clusterCount takes the earlier tier first, before stickiness and CPU: %v", got.Clusters)
	}

	decisions, _ := States(spec, []string{"a", "b"}, fleet, nil, time.Now(), false)
	if decisions[0].Tier != "onprem" || decisions[1].Tier != "" {
		t.Errorf("decisions name their tier, the implicit last one empty: %+v", decisions)
	}
	if i, name := TierOf(spec.Tiers, "b", nil); i != 1 || name != "" {
		t.Errorf("a cluster in no tier is in the implicit last one: %d %q", i, name)
	}
}
