package ownerkinds

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func TestFactsChanged(t *testing.T) {
	ready := func(s metav1.ConditionStatus, reason string) *flotillav1.Cluster {
		return &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: flotillav1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: flotillav1.ClusterReady, Status: s, Reason: reason}}}}
	}
	for _, c := range []struct {
		name     string
		old, new *flotillav1.Cluster
		want     bool
	}{
		{"Ready to not Ready (a rollout passes over it)", ready(metav1.ConditionTrue, "Probed"), ready(metav1.ConditionUnknown, "ProbeTimeout"), true},
		{"back to Ready (a rollout lets it through)", ready(metav1.ConditionFalse, "ProbeFailed"), ready(metav1.ConditionTrue, "Probed"), true},
		{"not Ready for another reason", ready(metav1.ConditionFalse, "ProbeFailed"), ready(metav1.ConditionUnknown, "ProbeTimeout"), false},
		{"nothing a pass reads", ready(metav1.ConditionTrue, "Probed"), ready(metav1.ConditionTrue, "Probed"), false},
	} {
		if got := FactsChanged().Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
			t.Errorf("%s: passed %v, want %v", c.name, got, c.want)
		}
	}
}
