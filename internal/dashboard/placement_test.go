package dashboard

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The Placement view shows its decisions with their state, what its owners' deliveries are on
// each chosen cluster, and the division of replicas.
func TestPlacementView(t *testing.T) {
	since := metav1.Now()
	p := &flotillav1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "europe"},
		Spec:       flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu-west"}}},
		Status: flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{
			{ClusterName: "spoke-1", Since: &since},
			{ClusterName: "spoke-2", State: flotillav1.DecisionFailedOver, Message: "not Ready for 20s"},
		}},
	}
	rec := record("team-a", "app-a", "spoke-1", "europe", readyStatus("apps/v1/Deployment", "team-a", "web"))
	rec.Spec.Replicas = []flotillav1.WorkloadReplicas{{Object: "apps/Deployment/team-a/web", Replicas: 3}}
	failed := record("team-a", "app-a", "spoke-2", "europe", flotillav1.DeliveryStatus{Count: 1, Failed: 1, Message: "web: cannot reach"})
	s, _ := testServer(t, p, rec, failed)
	_, body := get(t, s.handler(), "/placements/team-a/europe", "alice-token")
	for _, want := range []string{"labels region=eu-west", "Active", "FailedOver", "not Ready for 20s", "state-ready", "state-failed", "Propagation team-a/app-a", "apps/Deployment/team-a/web: 3"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Placement view lacks %q:\n%s", want, body)
		}
	}
	if _, list := get(t, s.handler(), "/placements", "alice-token"); !strings.Contains(list, "team-a/europe") || !strings.Contains(list, "spoke-2") {
		t.Errorf("the Placements list:\n%s", list)
	}
	if _, other := get(t, s.handler(), "/placements/team-a/europe", "nobody"); strings.Contains(other, "FailedOver") {
		t.Errorf("a caller without a token reads the Placement:\n%s", other)
	}
}
