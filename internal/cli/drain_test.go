package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

// drainHub is a fake hub where cluster spoke-1 is being drained and still counts one
// placement: the record of Propagation shop/web, whose Placement is p.
func drainHub(t *testing.T, p *flotillav1.Placement) client.Client {
	t.Helper()
	cluster := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1"},
		Spec:   flotillav1.ClusterSpec{Taints: []flotillav1.ClusterTaint{{Key: TaintDecommission, Effect: flotillav1.TaintEffectNoExecute}}},
		Status: flotillav1.ClusterStatus{Placements: 1}}
	record := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Name: "propagation.web.spoke-1", Namespace: "shop",
		Labels: ledger.PlacementSelector(client.ObjectKeyFromObject(p))},
		Spec: flotillav1.DeliverySpec{Cluster: "spoke-1",
			Owner: flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: "shop", Name: "web"}}}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).
		WithIndex(&flotillav1.Delivery{}, "spec.cluster", func(o client.Object) []string { return []string{o.(*flotillav1.Delivery).Spec.Cluster} }).
		WithObjects(cluster, p, record).WithStatusSubresource(cluster, p).
		WithInterceptorFuncs(interceptor.Funcs{List: metadataOfRecords}).Build()
}

// metadataOfRecords lists Delivery records as metadata by their spec.cluster field, as the hub
// does (a selectable field): the fake client's field index cannot read the spec of metadata.
func metadataOfRecords(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	meta, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok || meta.GroupVersionKind().Kind != "DeliveryList" {
		return c.List(ctx, list, opts...)
	}
	var full flotillav1.DeliveryList
	if err := c.List(ctx, &full, opts...); err != nil {
		return err
	}
	for _, d := range full.Items {
		meta.Items = append(meta.Items, metav1.PartialObjectMetadata{ObjectMeta: d.ObjectMeta})
	}
	return nil
}

func placement(status flotillav1.PlacementStatus, tolerations ...flotillav1.Toleration) *flotillav1.Placement {
	status.ObservedGeneration = 1
	return &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "shop", Generation: 1},
		Spec:   flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu-west"}}, Tolerations: tolerations},
		Status: status}
}

func scheduled(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: flotillav1.PlacementScheduled, Status: status, Reason: reason, Message: message}}
}

// TestDrainWaitSaysWhenAPlacementHasNowhereToGo: a Placement of an owner still on the drained
// cluster that chooses no cluster (or keeps it) ends `drain --wait` at once, naming the
// Placement, why, and what to do, rather than timing out blaming replacements not Ready.
func TestDrainWaitSaysWhenAPlacementHasNowhereToGo(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    *flotillav1.Placement
		want []string
	}{
		{"no other eligible cluster", placement(flotillav1.PlacementStatus{Conditions: scheduled(metav1.ConditionFalse, flotillav1.ReasonClustersExcluded,
			"clusters match but none may take placements: spoke-1 (taint flotilla.dev/decommission:NoExecute)")}),
			[]string{"placement shop/eu chooses no cluster now (ClustersExcluded: clusters match but none may take placements: spoke-1"}},
		{"tolerates the taint", placement(flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{{ClusterName: "spoke-1"}},
			Conditions: scheduled(metav1.ConditionTrue, flotillav1.ReasonClustersSelected, "1 clusters chosen")},
			flotillav1.Toleration{Key: TaintDecommission, Operator: flotillav1.TolerationOpExists}),
			[]string{"placement shop/eu tolerates the taint flotilla.dev/decommission:NoExecute, so it keeps spoke-1"}},
		{"invalid selector", placement(flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{{ClusterName: "spoke-1"}},
			Conditions: scheduled(metav1.ConditionFalse, flotillav1.ReasonInvalidSelector, `clusterSelector: "in": values set must be non-empty`)}),
			[]string{"placement shop/eu has an invalid selector"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hub := drainHub(t, tt.p)
			var out bytes.Buffer
			start := time.Now()
			err := waitDrained(context.Background(), hub, "spoke-1", 3*time.Second, &out)
			if err == nil {
				t.Fatal("waitDrained returned nil for a drain that cannot complete")
			}
			for _, want := range append(tt.want, "cannot be drained", "shop/propagation.web.spoke-1",
				"flotilla cluster uncordon spoke-1", "kubectl label cluster") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%s", want, err)
				}
			}
			if strings.Contains(err.Error(), "replacements are Ready") {
				t.Errorf("error blames replacements:\n%s", err)
			}
			if d := time.Since(start); d >= drainPoll {
				t.Errorf("waitDrained took %s; want the first look to tell", d)
			}
		})
	}
}

// TestDrainWaitKeepsWaitingForAMove: a Placement that chose another cluster is a move in
// progress, not a stuck drain.
func TestDrainWaitKeepsWaitingForAMove(t *testing.T) {
	p := placement(flotillav1.PlacementStatus{Decisions: []flotillav1.ClusterDecision{{ClusterName: "spoke-2"}},
		Conditions: scheduled(metav1.ConditionTrue, flotillav1.ReasonClustersSelected, "1 clusters chosen")})
	stuck, err := stuckPlacements(context.Background(), drainHub(t, p), "spoke-1")
	if err != nil || len(stuck) != 0 {
		t.Fatalf("stuckPlacements = %q, %v; want none", stuck, err)
	}
	// A status not yet written for the current spec says nothing.
	p = placement(flotillav1.PlacementStatus{Conditions: scheduled(metav1.ConditionFalse, flotillav1.ReasonNoClustersMatch, "none")})
	p.Generation = 2
	stuck, err = stuckPlacements(context.Background(), drainHub(t, p), "spoke-1")
	if err != nil || len(stuck) != 0 {
		t.Fatalf("stuckPlacements with a stale status = %q, %v; want none", stuck, err)
	}
}
