package propagation_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// A spread over the clusters' region label balances a divided workload over the regions
// first, then over each region's clusters: two clusters in eu and one in us run 3, 3 and 6 of
// 12 replicas, not 4 each; a 13th replica goes to a region where the skew stays within 1.
func TestSpreadBalancesReplicasOverRegions(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "eu", "spoke-c": "us"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "regions", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{},
			Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted},
			Spread:   []flotillav1.SpreadConstraint{{TopologyKey: "region", MaxSkew: ptr(int32(1))}}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(12))
	e.create(t, web)
	e.propagateDeployment(t, "web", "regions")
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 3, "spoke-b": 3, "spoke-c": 6})

	e.updateHub(t, web, func() { web.Spec.Replicas = ptr(int32(13)) })
	e.replicasOn(t, "web", map[string]int32{"spoke-c": 7})
	e.replicasOn(t, "web", map[string]int32{"spoke-a": 3, "spoke-b": 3})
}
