package dashboard

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The fleet API view shows each RGD an APIPropagation serves, the generation served and the
// instances per cluster, and the instances that are not ready; only to viewers who may list
// APIPropagations.
func TestFleetAPIs(t *testing.T) {
	counts := &flotillav1.InstanceCounts{Total: 3, Active: 2, Error: 1}
	ap := &flotillav1.APIPropagation{
		ObjectMeta: metav1.ObjectMeta{Name: "platform"},
		Spec:       flotillav1.APIPropagationSpec{PlacementRef: flotillav1.PlacementRef{Namespace: "flotilla-system", Name: "all"}},
		Status: flotillav1.APIPropagationStatus{
			TargetClusters: 2,
			APIs: []flotillav1.APIResult{{Name: "webservice.kro.run", Kind: "WebService.kro.run", Generation: 4, ServingClusters: 1, FailedClusters: 1, Instances: counts,
				NotReady: []flotillav1.NotReadyInstance{{Cluster: "spoke-2", Instance: "shop/cart", State: "ERROR", Reason: "ResourceFailed"}}}},
			ClusterResults: []flotillav1.APIClusterResult{
				{Cluster: "spoke-2", API: "webservice.kro.run", Phase: "Failed", Reason: "SchemaNotFound", ServedGeneration: 3, Instances: counts},
				{Cluster: "spoke-1", API: "webservice.kro.run", Phase: "Serving", ServedGeneration: 4},
			},
		},
	}
	s, _ := testServer(t, ap)
	_, body := get(t, s.handler(), "/apis", "admin-token")
	for _, want := range []string{"APIPropagation platform", "webservice.kro.run", "Revision (generation) 4", "spoke-1", "Serving", "Failed (SchemaNotFound)", "3 (2 active, 1 in error)", "shop/cart ERROR ResourceFailed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the fleet API view lacks %q:\n%s", want, body)
		}
	}
	if strings.Index(body, "spoke-1") > strings.Index(body, "spoke-2") {
		t.Errorf("clusters are not in order:\n%s", body)
	}
	if _, denied := get(t, s.handler(), "/apis", "alice-token"); !strings.Contains(denied, "may not list APIPropagations") || strings.Contains(denied, "webservice") {
		t.Errorf("alice's fleet API view:\n%s", denied)
	}
}
