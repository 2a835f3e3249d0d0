package scheduler

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// With clusterCount, a failed-over cluster gets a stand-in that is filled first; the stand-in
// stays while the cluster is away (Returning included), and is let go once it is Active again.
func TestDecideStandsInForAClusterAway(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ready := func(status metav1.ConditionStatus, since time.Time) func(*flotillav1.Cluster) {
		return func(c *flotillav1.Cluster) {
			c.Status.Conditions = []metav1.Condition{{Type: flotillav1.ClusterReady, Status: status, Reason: "Probed", LastTransitionTime: metav1.NewTime(since)}}
		}
	}
	up := ready(metav1.ConditionTrue, t0.Add(-time.Hour))
	spec := count(2)
	spec.Moves = &flotillav1.MovePolicy{ClusterUnhealthyAfter: &metav1.Duration{Duration: time.Minute}, FailbackAfter: &metav1.Duration{Duration: 10 * time.Minute}}
	fleet := func(a func(*flotillav1.Cluster)) []flotillav1.Cluster {
		return []flotillav1.Cluster{cluster("a", nil, cpus("16"), a), cluster("b", nil, cpus("16"), up), cluster("c", nil, cpus("8"), up), cluster("d", nil, cpus("4"), up)}
	}
	decide := func(clusters []flotillav1.Cluster, previous []string, ds []flotillav1.ClusterDecision, now time.Time) (Result, []flotillav1.ClusterDecision) {
		t.Helper()
		res, out, _, err := Decide(spec, clusters, previous, ds, "seed", now, false)
		if err != nil {
			t.Fatal(err)
		}
		return res, out
	}
	names := func(ds []flotillav1.ClusterDecision) (out []string) {
		for _, d := range ds {
			out = append(out, d.ClusterName+":"+string(d.State)+">"+d.Replaces)
		}
		return out
	}

	res, ds := decide(fleet(up), nil, nil, t0)
	if !slices.Equal(res.Clusters, []string{"a", "b"}) {
		t.Fatalf("clusterCount 2 of the biggest: %v", res.Clusters)
	}
	// a has not been Ready for two minutes: failed over, and c (the next biggest) stands in.
	down := fleet(ready(metav1.ConditionFalse, t0))
	res, ds = decide(down, res.Clusters, ds, t0.Add(2*time.Minute))
	if got := names(ds); !slices.Equal(got, []string{"a:FailedOver>", "b:>", "c:>a"}) {
		t.Fatalf("decisions %v, want a FailedOver and c standing in for it", got)
	}
	// Still away: the stand-in stays, even when a bigger cluster appears.
	bigger := append(down, cluster("e", nil, cpus("64"), up))
	res, ds = decide(bigger, res.Clusters, ds, t0.Add(3*time.Minute))
	if got := names(ds); !slices.Equal(got, []string{"a:FailedOver>", "b:>", "c:>a"}) {
		t.Fatalf("decisions %v, want the stand-in kept", got)
	}
	// Ready again: Returning, still away, the stand-in stays.
	back := fleet(ready(metav1.ConditionTrue, t0.Add(4*time.Minute)))
	res, ds = decide(back, res.Clusters, ds, t0.Add(5*time.Minute))
	if got := names(ds); !slices.Equal(got, []string{"a:Returning>", "b:>", "c:>a"}) {
		t.Fatalf("decisions %v, want a Returning with its stand-in", got)
	}
	// Active after failbackAfter: the stand-in is let go, a keeps its place.
	res, ds = decide(back, res.Clusters, ds, t0.Add(15*time.Minute))
	if got := names(ds); !slices.Equal(got, []string{"a:>", "b:>"}) || !slices.Equal(res.Clusters, []string{"a", "b"}) {
		t.Fatalf("decisions %v, want a back and c let go", got)
	}
	// Without clusterCount nothing stands in.
	spec.ClusterCount = nil
	if _, ds := decide(down, []string{"a", "b"}, nil, t0.Add(2*time.Minute)); len(ds) != 4 {
		t.Fatalf("every cluster is chosen without clusterCount: %v", names(ds))
	}
}
