package hubmetrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// deployments stands for transparent mode's Deployments: their conditions kept in memory.
type deployments [][]metav1.Condition

func (deployments) MetricsKind() string                     { return "Deployment" }
func (d deployments) OwnerConditions() [][]metav1.Condition { return d }

// TestOwnersInMemoryAreCounted: transparent-mode objects, whose conditions their controller
// keeps, are counted in flotilla_owners with the Propagations, so FlotillaPruneBlocked sees a
// blocked Deployment.
func TestOwnersInMemoryAreCounted(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Status: flotillav1.PropagationStatus{
			Conditions: []metav1.Condition{cond(flotillav1.PropagationPruneBlocked, "True", flotillav1.ReasonPruneBlocked)}}},
	).Build()
	elected := make(chan struct{})
	close(elected)
	blocked := []metav1.Condition{cond(flotillav1.PropagationApplied, "False", flotillav1.ReasonPruneBlocked),
		cond(flotillav1.PropagationPruneBlocked, "True", flotillav1.ReasonPruneBlocked)}
	applied := []metav1.Condition{cond(flotillav1.PropagationApplied, "True", flotillav1.ReasonApplied),
		cond(flotillav1.PropagationPruneBlocked, "False", flotillav1.ReasonApplied)}
	defer Use(c, elected, deployments{blocked, applied, applied})()
	want := `
# HELP flotilla_owners ` + help(t, "flotilla_owners") + `
# TYPE flotilla_owners gauge
flotilla_owners{condition="Applied",kind="Deployment",reason="Applied",status="True"} 2
flotilla_owners{condition="Applied",kind="Deployment",reason="PruneBlocked",status="False"} 1
flotilla_owners{condition="PruneBlocked",kind="Deployment",reason="Applied",status="False"} 2
flotilla_owners{condition="PruneBlocked",kind="Deployment",reason="PruneBlocked",status="True"} 1
flotilla_owners{condition="PruneBlocked",kind="Propagation",reason="PruneBlocked",status="True"} 1
`
	if err := testutil.CollectAndCompare(collector{}, strings.NewReader(want), "flotilla_owners"); err != nil {
		t.Fatal(err)
	}
}
