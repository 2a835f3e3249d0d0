package division

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// A Placement's spread reaches the scheduler: regions first, then the policy inside each.
func TestDivideWithSpread(t *testing.T) {
	region := []flotillav1.SpreadConstraint{{TopologyKey: "region"}}
	strict := []flotillav1.SpreadConstraint{{TopologyKey: "region", WhenUnsatisfiable: flotillav1.DoNotSchedule, MaxSkew: ptr(int32(1))}}
	tests := []struct {
		name      string
		spread    []flotillav1.SpreadConstraint
		chosen    map[string]map[string]string
		policy    *flotillav1.ReplicaPolicy
		total     int64
		want      map[string]int64
		inMessage string
	}{
		{"without spread: a, b and c alike", nil, three, nil, 9, map[string]int64{"a": 3, "b": 3, "c": 3}, ""},
		{"spread over region: half to the lone us cluster", region, three, nil, 8, map[string]int64{"a": 2, "b": 2, "c": 4}, ""},
		{"weights inside a region", region, three, weighted(entry("a", 3, "a")), 8, map[string]int64{"a": 3, "b": 1, "c": 4}, ""},
		{"DoNotSchedule: a cluster without the label gets nothing", strict,
			map[string]map[string]string{"a": {"region": "eu"}, "c": {"region": "us"}, "edge": {}}, nil, 6,
			map[string]int64{"a": 3, "c": 3, "edge": 0}, ""},
		{"DoNotSchedule: a capped region holds the other to maxSkew", strict, three,
			weighted(flotillav1.ClusterReplicas{Name: "us", ClusterNames: []string{"c"}, Weight: ptr(int32(1)), Max: ptr(intstr.FromInt32(1))}), 8,
			map[string]int64{"a": 1, "b": 1, "c": 1}, "5 of 8 replicas unplaced: the spread admits 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Divide(Input{Policy: tt.policy, Spread: tt.spread, Chosen: tt.chosen, Totals: map[string]int64{web: tt.total}, Seed: "team/web"})
			if !maps.Equal(out.Shares[web], tt.want) {
				t.Errorf("shares %v, want %v", out.Shares[web], tt.want)
			}
			if !strings.Contains(out.Messages[web], tt.inMessage) || (tt.inMessage == "") != (out.Messages[web] == "") {
				t.Errorf("message %q, want one saying %q", out.Messages[web], tt.inMessage)
			}
		})
	}
}

func TestFollowsCluster(t *testing.T) {
	limited := &flotillav1.Cluster{Spec: flotillav1.ClusterSpec{PlacementLimits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	for name, tt := range map[string]struct {
		spec        flotillav1.PlacementSpec
		transparent bool
		cluster     *flotillav1.Cluster
		want        bool
	}{
		"nothing":                        {spec: flotillav1.PlacementSpec{}},
		"weights by name":                {spec: flotillav1.PlacementSpec{Replicas: weighted(entry("a", 2, "a"))}},
		"capacity":                       {spec: flotillav1.PlacementSpec{Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeCapacity}}, want: true},
		"spread":                         {spec: flotillav1.PlacementSpec{Spread: []flotillav1.SpreadConstraint{{TopologyKey: "region"}}}, want: true},
		"spread, no split":               {spec: flotillav1.PlacementSpec{Spread: []flotillav1.SpreadConstraint{{TopologyKey: "region"}}, Replicas: weighted()}, want: true},
		"tiers":                          {spec: flotillav1.PlacementSpec{Tiers: []flotillav1.ClusterTier{{Name: "first", ClusterNames: []string{"a"}}}}, want: true},
		"limits, weighted":               {spec: flotillav1.PlacementSpec{Replicas: weighted()}, cluster: limited, want: true},
		"limits, duplicated Propagation": {spec: flotillav1.PlacementSpec{}, cluster: limited},
		"limits, transparent":            {spec: flotillav1.PlacementSpec{}, transparent: true, cluster: limited, want: true},
	} {
		if got := FollowsCluster(tt.spec, tt.transparent, tt.cluster); got != tt.want {
			t.Errorf("%s: %v, want %v", name, got, tt.want)
		}
	}
}
