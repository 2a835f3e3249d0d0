package hubmetrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func cond(t, status, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason}
}

func TestFleetGaugesCountByState(t *testing.T) {
	cluster := func(name string, conds ...metav1.Condition) *flotillav1.Cluster {
		return &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: flotillav1.ClusterStatus{Conditions: conds}}
	}
	prop := func(name string, conds ...metav1.Condition) *flotillav1.Propagation {
		return &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}, Status: flotillav1.PropagationStatus{Conditions: conds}}
	}
	c := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		cluster("a", cond(flotillav1.ClusterReady, "True", flotillav1.ReasonProbed)),
		cluster("b", cond(flotillav1.ClusterReady, "True", flotillav1.ReasonProbed)),
		cluster("c", cond(flotillav1.ClusterReady, "False", flotillav1.ReasonUnauthorized)),
		cluster("d"),
		prop("web", cond(flotillav1.PropagationApplied, "True", flotillav1.ReasonApplied), cond(flotillav1.PropagationPruneBlocked, "True", flotillav1.ReasonPruneBlocked)),
		prop("db", cond(flotillav1.PropagationApplied, "True", flotillav1.ReasonApplied)),
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: "team"}, Status: flotillav1.PropagationStatus{
			Rollout: &flotillav1.RolloutStatus{Phase: flotillav1.RolloutHalted, Stages: []flotillav1.RolloutStageStatus{
				{Name: "canary", Clusters: 2, Done: 1, Failed: 1}, {Name: "rest", Clusters: 3, Pending: 3}}}}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "soaking", Namespace: "team"}, Status: flotillav1.PropagationStatus{
			Rollout: &flotillav1.RolloutStatus{Phase: flotillav1.RolloutSoaking, Stages: []flotillav1.RolloutStageStatus{
				{Name: "canary", State: flotillav1.RolloutClusterSoaking, Clusters: 2, Done: 2},
				{Name: "prod", State: flotillav1.RolloutClusterWaitingForApproval, Clusters: 4, Pending: 4},
				{Name: "rest", State: flotillav1.RolloutClusterProgressing, Clusters: 3, Done: 1, InFlight: 2}}}}},
		&flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "base"}, Status: flotillav1.PropagationStatus{Conditions: []metav1.Condition{
			cond(flotillav1.PropagationApplied, "False", flotillav1.ReasonApplyFailed)}}},
	).Build()

	elected := make(chan struct{})
	stop := Use(c, elected)
	defer stop()
	if n := testutil.CollectAndCount(collector{}); n != 0 {
		t.Fatalf("a replica not elected exported %d series", n)
	}
	close(elected)
	want := `
# HELP flotilla_clusters ` + help(t, "flotilla_clusters") + `
# TYPE flotilla_clusters gauge
flotilla_clusters{state="not_ready"} 1
flotilla_clusters{state="ready"} 2
flotilla_clusters{state="unreachable"} 1
# HELP flotilla_owners ` + help(t, "flotilla_owners") + `
# TYPE flotilla_owners gauge
flotilla_owners{condition="Applied",kind="ClusterPropagation",reason="ApplyFailed",status="False"} 1
flotilla_owners{condition="Applied",kind="Propagation",reason="Applied",status="True"} 2
flotilla_owners{condition="PruneBlocked",kind="Propagation",reason="PruneBlocked",status="True"} 1
`
	if err := testutil.CollectAndCompare(collector{}, strings.NewReader(want), "flotilla_clusters", "flotilla_owners"); err != nil {
		t.Fatal(err)
	}
	rollouts := `
# HELP flotilla_rollout_clusters ` + help(t, "flotilla_rollout_clusters") + `
# TYPE flotilla_rollout_clusters gauge
flotilla_rollout_clusters{kind="ClusterPropagation",state="failed"} 0
flotilla_rollout_clusters{kind="ClusterPropagation",state="pending"} 0
flotilla_rollout_clusters{kind="ClusterPropagation",state="progressing"} 0
flotilla_rollout_clusters{kind="ClusterPropagation",state="soaking"} 0
flotilla_rollout_clusters{kind="ClusterPropagation",state="succeeded"} 0
flotilla_rollout_clusters{kind="ClusterPropagation",state="waiting_for_approval"} 0
flotilla_rollout_clusters{kind="Propagation",state="failed"} 1
flotilla_rollout_clusters{kind="Propagation",state="pending"} 3
flotilla_rollout_clusters{kind="Propagation",state="progressing"} 2
flotilla_rollout_clusters{kind="Propagation",state="soaking"} 2
flotilla_rollout_clusters{kind="Propagation",state="succeeded"} 2
flotilla_rollout_clusters{kind="Propagation",state="waiting_for_approval"} 4
`
	if err := testutil.CollectAndCompare(collector{}, strings.NewReader(rollouts), "flotilla_rollout_clusters"); err != nil {
		t.Fatal(err)
	}
	phases := "\n# HELP flotilla_rollouts " + help(t, "flotilla_rollouts") + "\n# TYPE flotilla_rollouts gauge\n"
	for _, kind := range []string{"ClusterPropagation", "Propagation"} {
		for _, phase := range []string{"Complete", "Halted", "Paused", "Progressing", "RolledBack", "Soaking", "WaitingForApproval"} {
			n := 0
			if kind == "Propagation" && (phase == "Halted" || phase == "Soaking") {
				n = 1
			}
			phases += fmt.Sprintf("flotilla_rollouts{kind=%q,phase=%q} %d\n", kind, phase, n)
		}
	}
	if err := testutil.CollectAndCompare(collector{}, strings.NewReader(phases), "flotilla_rollouts"); err != nil {
		t.Fatal(err)
	}
	stop()
	if n := testutil.CollectAndCount(collector{}); n != 0 {
		t.Fatalf("after stop: %d series", n)
	}
}

// help reads a metric's help text from its description.
func help(t *testing.T, name string) string {
	t.Helper()
	for _, d := range []string{clustersDesc.String(), ownersDesc.String(), rolloutsDesc.String(), rolloutClustersDesc.String()} {
		if strings.Contains(d, `"`+name+`"`) {
			i := strings.Index(d, `help: "`) + len(`help: "`)
			return d[i : i+strings.Index(d[i:], `"`)]
		}
	}
	t.Fatalf("no metric %s", name)
	return ""
}
