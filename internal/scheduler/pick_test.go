package scheduler

import (
	"fmt"
	"math"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func cpus(n string) func(*flotillav1.Cluster) {
	return func(c *flotillav1.Cluster) {
		c.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
}

func count(n int32) flotillav1.PlacementSpec {
	return flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, ClusterCount: &n}
}

func TestClusterCount(t *testing.T) {
	fleet := []flotillav1.Cluster{cluster("a", nil, cpus("4")), cluster("b", nil, cpus("16")), cluster("c", nil, cpus("8")), cluster("d", nil, cpus("2"))}
	tests := []struct {
		name       string
		spec       flotillav1.PlacementSpec
		clusters   []flotillav1.Cluster
		previous   []string
		want       []string
		wantReason string
	}{
		{"the most CPU first", count(2), fleet, nil, []string{"b", "c"}, flotillav1.ReasonClustersSelected},
		{"sticky: chosen before stay, however small", count(2), fleet, []string{"a", "d"}, []string{"a", "d"}, flotillav1.ReasonClustersSelected},
		{"a place that frees up goes to the most CPU", count(2), fleet, []string{"d", "gone"}, []string{"b", "d"}, flotillav1.ReasonClustersSelected},
		{"a cluster drained (NoExecute) is replaced",
			count(2), []flotillav1.Cluster{cluster("a", nil, cpus("4")), cluster("b", nil, cpus("16"), tainted("flotilla.dev/decommission", "", flotillav1.TaintEffectNoExecute)), cluster("c", nil, cpus("8"))},
			[]string{"a", "b"}, []string{"a", "c"}, flotillav1.ReasonClustersSelected},
		{"a cordoned cluster chosen before stays", count(1), []flotillav1.Cluster{cluster("a", nil, cpus("4"), cordoned), cluster("b", nil, cpus("16"))},
			[]string{"a"}, []string{"a"}, flotillav1.ReasonClustersSelected},
		{"fewer eligible than asked: all of them, and the condition says so", count(5), fleet, nil, []string{"a", "b", "c", "d"}, flotillav1.ReasonClusterCountNotMet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Schedule(tt.spec, tt.clusters, tt.previous, "placement-uid")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Clusters, tt.want) || got.Reason != tt.wantReason {
				t.Fatalf("Schedule = %v (%s: %s), want %v (%s)", got.Clusters, got.Reason, got.Message, tt.want, tt.wantReason)
			}
		})
	}
}

// Equal clusters are chosen by a hash of the Placement and the name, not by the name: over many
// Placements, each of four equal clusters is the one chosen about a quarter of the time.
func TestClusterCountHasNoNameBias(t *testing.T) {
	fleet := []flotillav1.Cluster{cluster("a", nil), cluster("b", nil), cluster("c", nil), cluster("d", nil)}
	const placements = 4000
	times := map[string]int{}
	for i := range placements {
		got, err := Schedule(count(1), fleet, nil, fmt.Sprintf("uid-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		times[got.Clusters[0]]++
	}
	for _, c := range []string{"a", "b", "c", "d"} {
		if share := float64(times[c]) / placements; math.Abs(share-0.25) > 0.03 {
			t.Errorf("cluster %s chosen %.1f%% of the time, want 25%% ± 3%%: %v", c, 100*share, times)
		}
	}
}
