package placement

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// TestAnInvalidSelectorIsSaidOnThePlacement: the API accepts selectors that do not parse
// (operator In without values); the Placement keeps the clusters it had, its Scheduled
// condition says which selector is invalid, and one Warning Event says so, whichever selector
// of the spec it is.
func TestAnInvalidSelectorIsSaidOnThePlacement(t *testing.T) {
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn}}}
	good := &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu-west"}}
	for _, tt := range []struct {
		name string
		spec flotillav1.PlacementSpec
		path string
	}{
		{"clusterSelector", flotillav1.PlacementSpec{ClusterSelector: bad}, "spec.clusterSelector is invalid"},
		{"a tier's", flotillav1.PlacementSpec{ClusterSelector: good, Tiers: []flotillav1.ClusterTier{{Name: "onprem", ClusterSelector: bad}}},
			"spec.tiers[0].clusterSelector (tier onprem) is invalid"},
		{"a replicas entry's", flotillav1.PlacementSpec{ClusterSelector: good, Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted,
			Clusters: []flotillav1.ClusterReplicas{{Name: "eu", ClusterSelector: bad}}}}, "spec.replicas.clusters[0].clusterSelector (entry eu) is invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "shop", Generation: 1}, Spec: tt.spec,
				Status: flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{{ClusterName: "spoke-1"}}, SelectedClusters: 1}}
			cluster := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1", Labels: map[string]string{"region": "eu-west"}}}
			hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(p, cluster).WithStatusSubresource(p).Build()
			events := record.NewFakeRecorder(10)
			r := &Reconciler{Client: hub, recorder: events}
			for range 2 {
				if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
					t.Fatal(err)
				}
			}
			got := &flotillav1.Placement{}
			if err := hub.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, flotillav1.PlacementScheduled)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != flotillav1.ReasonInvalidSelector || !strings.Contains(cond.Message, tt.path) {
				t.Fatalf("Scheduled condition %+v; want False, InvalidSelector, naming %q", cond, tt.path)
			}
			if len(got.Status.Decisions) != 1 || got.Status.Decisions[0].ClusterName != "spoke-1" {
				t.Errorf("decisions %+v; want spoke-1 kept", got.Status.Decisions)
			}
			if len(events.Events) != 1 {
				t.Fatalf("%d Events after two passes, want one Warning", len(events.Events))
			}
			if e := <-events.Events; !strings.HasPrefix(e, "Warning InvalidSelector "+tt.path) || !strings.Contains(e, "values set can't be empty") {
				t.Errorf("Event %q", e)
			}
		})
	}
}
