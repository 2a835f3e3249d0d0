package fanout

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// Facts says which clusters the hub cannot reach (their Ready condition is not True); one not
// probed yet, or not read, is left to what the deliverer finds.
func TestFactsSayWhichClustersAreUnreachable(t *testing.T) {
	cluster := func(name string, conds ...metav1.Condition) *flotillav1.Cluster {
		return &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: flotillav1.ClusterStatus{Conditions: conds}}
	}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		cluster("up", metav1.Condition{Type: flotillav1.ClusterReady, Status: metav1.ConditionTrue, Reason: "Probed"}),
		cluster("frozen", metav1.Condition{Type: flotillav1.ClusterReady, Status: metav1.ConditionUnknown, Reason: "ProbeTimeout"}),
		cluster("new"),
	).Build()
	facts := Facts(context.Background(), hub, []string{"up", "frozen", "new", "gone"})
	for name, want := range map[string]string{"up": "", "frozen": "not Ready: ProbeTimeout", "new": "", "gone": ""} {
		if got := facts[name].Unreachable; got != want {
			t.Errorf("%s: unreachable %q, want %q", name, got, want)
		}
	}
}
