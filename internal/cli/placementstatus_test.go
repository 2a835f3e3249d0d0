package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

func TestPrintPlacementStatus(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	since := metav1.NewTime(now.Add(-90 * time.Second))
	p := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "weighted", Namespace: "team"},
		Status: flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{
			{ClusterName: "spoke-a", Tier: "onprem"},
			{ClusterName: "spoke-b", State: flotillav1.DecisionFailedOver, Since: &since, Message: "not Ready for more than 20s"},
			{ClusterName: "spoke-c", Replaces: "spoke-b"},
		}}}
	fits := int32(1)
	record := func(cluster string, replicas int32, fit *int32) *flotillav1.Delivery {
		d := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Name: "propagation.web." + cluster, Namespace: "team",
			Labels: ledger.PlacementSelector(client.ObjectKeyFromObject(p))},
			Spec: flotillav1.DeliverySpec{Cluster: cluster, Replicas: []flotillav1.WorkloadReplicas{{Object: "apps/Deployment/team/web", Replicas: replicas, Fits: fit}}}}
		return d
	}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(record("spoke-a", 1, &fits), record("spoke-c", 5, nil)).Build()
	var out bytes.Buffer
	if err := printPlacementStatus(context.Background(), &out, hub, p, now); err != nil {
		t.Fatal(err)
	}
	containsAll(t, out.String(),
		"CLUSTER   TIER     STATE",
		"spoke-a   onprem   Active       <none>   <none>     Deployment/web=1 (fits 1)",
		"spoke-b   <none>   FailedOver   90s      <none>     <none>",
		"spoke-c   <none>   Active       <none>   spoke-b    Deployment/web=5",
	)
}
