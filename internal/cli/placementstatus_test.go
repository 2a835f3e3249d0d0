package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "web-uid"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "weighted"}}}
	record := func(cluster string, replicas int32, fit *int32, uid types.UID) *flotillav1.Delivery {
		d := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Name: "propagation.web." + cluster, Namespace: "team",
			Labels:          ledger.PlacementSelector(client.ObjectKeyFromObject(p)),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Name: "web", UID: uid}}},
			Spec: flotillav1.DeliverySpec{Owner: flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: "team", Name: "web"},
				Cluster: cluster, Replicas: []flotillav1.WorkloadReplicas{{Object: "apps/Deployment/team/web", Replicas: replicas, Fits: fit}}}}
		return d
	}
	// spoke-b's record was not written for the live owner (another UID): it is not shown.
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner,
		record("spoke-a", 1, &fits, owner.UID), record("spoke-b", 7, nil, "forged"), record("spoke-c", 5, nil, owner.UID)).Build()
	var out bytes.Buffer
	if err := printPlacementStatus(context.Background(), &out, hub, p, now); err != nil {
		t.Fatal(err)
	}
	containsAll(t, out.String(),
		"CLUSTER   TIER     STATE",
		"spoke-a   onprem   Active       <none>   <none>     Deployment/web=1 (fits 1)",
		"spoke-b   <none>   FailedOver   90s      <none>     <none>  ",
		"spoke-c   <none>   Active       <none>   spoke-b    Deployment/web=5",
	)
}
