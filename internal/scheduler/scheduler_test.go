package scheduler

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func cluster(name string, labels map[string]string, mutate ...func(*flotillav1.Cluster)) flotillav1.Cluster {
	c := flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, m := range mutate {
		m(&c)
	}
	return c
}

func cordoned(c *flotillav1.Cluster) { c.Spec.Unschedulable = true }

func tainted(key, value string, effect flotillav1.TaintEffect) func(*flotillav1.Cluster) {
	return func(c *flotillav1.Cluster) {
		c.Spec.Taints = append(c.Spec.Taints, flotillav1.ClusterTaint{Key: key, Value: value, Effect: effect})
	}
}

func deleting(c *flotillav1.Cluster) {
	now := metav1.Now()
	c.DeletionTimestamp = &now
}

func selector(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func TestSchedule(t *testing.T) {
	eu := map[string]string{"region": "eu"}
	us := map[string]string{"region": "us"}
	fleet := []flotillav1.Cluster{cluster("a", eu), cluster("b", eu), cluster("c", us)}
	tests := []struct {
		name       string
		spec       flotillav1.PlacementSpec
		clusters   []flotillav1.Cluster
		previous   []string
		want       []string
		wantReason string
		wantMsg    string
	}{
		{name: "by names", spec: flotillav1.PlacementSpec{ClusterNames: []string{"c", "a"}}, clusters: fleet,
			want: []string{"a", "c"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "by selector", spec: flotillav1.PlacementSpec{ClusterSelector: selector("region", "eu")}, clusters: fleet,
			want: []string{"a", "b"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "empty selector chooses all", spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}, clusters: fleet,
			want: []string{"a", "b", "c"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "names or selector", spec: flotillav1.PlacementSpec{ClusterNames: []string{"c"}, ClusterSelector: selector("region", "eu")}, clusters: fleet,
			want: []string{"a", "b", "c"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "neither set chooses nothing", spec: flotillav1.PlacementSpec{}, clusters: fleet,
			wantReason: flotillav1.ReasonNoClustersMatch},
		{name: "unknown names are reported", spec: flotillav1.PlacementSpec{ClusterNames: []string{"typo"}}, clusters: fleet,
			wantReason: flotillav1.ReasonNoClustersMatch, wantMsg: "unknown cluster names: typo"},
		{name: "selector matching nothing", spec: flotillav1.PlacementSpec{ClusterSelector: selector("region", "mars")}, clusters: fleet,
			wantReason: flotillav1.ReasonNoClustersMatch, wantMsg: "no cluster of 3"},
		{name: "no clusters at all", spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}},
			wantReason: flotillav1.ReasonNoClustersMatch},
		{name: "cordoned cluster takes no new placement", spec: flotillav1.PlacementSpec{ClusterSelector: selector("region", "eu")},
			clusters: []flotillav1.Cluster{cluster("a", eu, cordoned), cluster("b", eu)},
			want:     []string{"b"}, wantReason: flotillav1.ReasonClustersSelected, wantMsg: "a (cordoned)"},
		{name: "cordoned cluster keeps an existing placement", spec: flotillav1.PlacementSpec{ClusterSelector: selector("region", "eu")},
			clusters: []flotillav1.Cluster{cluster("a", eu, cordoned), cluster("b", eu)}, previous: []string{"a"},
			want: []string{"a", "b"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "all matching clusters cordoned", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"}},
			clusters:   []flotillav1.Cluster{cluster("a", eu, cordoned)},
			wantReason: flotillav1.ReasonClustersExcluded, wantMsg: "a (cordoned)"},
		{name: "NoSchedule taint keeps new placements off", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a", "b"}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("maint", "", flotillav1.TaintEffectNoSchedule)), cluster("b", eu)},
			want:     []string{"b"}, wantReason: flotillav1.ReasonClustersSelected, wantMsg: "a (taint maint:NoSchedule)"},
		{name: "NoSchedule taint keeps an existing placement", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("maint", "", flotillav1.TaintEffectNoSchedule))}, previous: []string{"a"},
			want: []string{"a"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "NoExecute taint removes an existing placement", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a", "b"}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("gone", "x", flotillav1.TaintEffectNoExecute)), cluster("b", eu)}, previous: []string{"a", "b"},
			want: []string{"b"}, wantReason: flotillav1.ReasonClustersSelected, wantMsg: "a (taint gone=x:NoExecute)"},
		{name: "Equal toleration", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"},
			Tolerations: []flotillav1.Toleration{{Key: "gpu", Operator: flotillav1.TolerationOpEqual, Value: "yes", Effect: flotillav1.TaintEffectNoSchedule}}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("gpu", "yes", flotillav1.TaintEffectNoSchedule))},
			want:     []string{"a"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "Equal toleration with another value does not tolerate", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"},
			Tolerations: []flotillav1.Toleration{{Key: "gpu", Operator: flotillav1.TolerationOpEqual, Value: "no"}}},
			clusters:   []flotillav1.Cluster{cluster("a", eu, tainted("gpu", "yes", flotillav1.TaintEffectNoSchedule))},
			wantReason: flotillav1.ReasonClustersExcluded},
		{name: "Exists toleration of a key, any effect", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"},
			Tolerations: []flotillav1.Toleration{{Key: "gone", Operator: flotillav1.TolerationOpExists}}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("gone", "x", flotillav1.TaintEffectNoExecute))},
			want:     []string{"a"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "toleration of another effect does not tolerate", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"},
			Tolerations: []flotillav1.Toleration{{Key: "gone", Operator: flotillav1.TolerationOpExists, Effect: flotillav1.TaintEffectNoSchedule}}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("gone", "x", flotillav1.TaintEffectNoExecute))}, previous: []string{"a"},
			wantReason: flotillav1.ReasonClustersExcluded},
		{name: "empty Exists toleration tolerates everything", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a"},
			Tolerations: []flotillav1.Toleration{{Operator: flotillav1.TolerationOpExists}}},
			clusters: []flotillav1.Cluster{cluster("a", eu, tainted("x", "", flotillav1.TaintEffectNoExecute), tainted("y", "1", flotillav1.TaintEffectNoSchedule))},
			want:     []string{"a"}, wantReason: flotillav1.ReasonClustersSelected},
		{name: "a cluster being deleted is never chosen", spec: flotillav1.PlacementSpec{ClusterNames: []string{"a", "b"}},
			clusters: []flotillav1.Cluster{cluster("a", eu, deleting), cluster("b", eu)}, previous: []string{"a"},
			want: []string{"b"}, wantReason: flotillav1.ReasonClustersSelected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Schedule(tt.spec, tt.clusters, tt.previous, "seed")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Clusters, tt.want) || got.Reason != tt.wantReason {
				t.Fatalf("got %v %s (%s), want %v %s", got.Clusters, got.Reason, got.Message, tt.want, tt.wantReason)
			}
			if !strings.Contains(got.Message, tt.wantMsg) {
				t.Fatalf("message %q lacks %q", got.Message, tt.wantMsg)
			}
		})
	}
}

func TestScheduleInvalidSelector(t *testing.T) {
	spec := flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}}
	if _, err := Schedule(spec, nil, nil, "seed"); err == nil || !strings.Contains(err.Error(), "clusterSelector") {
		t.Fatalf("error = %v", err)
	}
}

func TestScheduleLongExclusionListIsBounded(t *testing.T) {
	var clusters []flotillav1.Cluster
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		clusters = append(clusters, cluster(n, nil, cordoned))
	}
	got, _ := Schedule(flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}, clusters, nil, "seed")
	if !strings.Contains(got.Message, "and 2 more") {
		t.Fatalf("message = %q", got.Message)
	}
}
