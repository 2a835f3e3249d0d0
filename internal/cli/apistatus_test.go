package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func apiPropagations() (*flotillav1.APIPropagation, *flotillav1.APIPropagation) {
	serving := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "a-public"},
		Status: flotillav1.APIPropagationStatus{
			APICount: 1, TargetClusters: 2, ServingClusters: 1, FailedClusters: 1,
			Instances: &flotillav1.InstanceCounts{Total: 3, Active: 2, InProgress: 1},
			Conditions: []metav1.Condition{{Type: flotillav1.APIPropagationServing, Status: metav1.ConditionFalse,
				Reason: "CompileFailed", Message: "webservice.kro.run on spoke-2: generation 2 does not compile"}},
			APIs: []flotillav1.APIResult{{Name: "webservice.kro.run", Kind: "WebService.kro.run", Generation: 2, ServingClusters: 1, FailedClusters: 1,
				Instances: &flotillav1.InstanceCounts{Total: 3, Active: 2, InProgress: 1},
				NotReady:  []flotillav1.NotReadyInstance{{Cluster: "spoke-1", Instance: "shop/cart", State: "IN_PROGRESS", Reason: "ResourcesNotReady", Message: "awaiting deployment"}}}},
			ClusterResults: []flotillav1.APIClusterResult{
				{Cluster: "spoke-2", API: "webservice.kro.run", Phase: flotillav1.APICompileFailed, ServedGeneration: 1, Reason: flotillav1.ReasonSchemaNotFound,
					Message: "generation 2: no schema for Queue", Instances: &flotillav1.InstanceCounts{Total: 1, Active: 1}},
				{Cluster: "spoke-1", API: "webservice.kro.run", Phase: flotillav1.APIServing, ServedGeneration: 2,
					Instances: &flotillav1.InstanceCounts{Total: 2, Active: 1, InProgress: 1}},
				{Cluster: "spoke-1", API: "other.kro.run", Phase: flotillav1.APIPending},
			},
		}}
	other := &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: "b-later"},
		Status: flotillav1.APIPropagationStatus{APIs: []flotillav1.APIResult{{Name: "webservice.kro.run", Message: "served by APIPropagation a-public, whose name sorts first"}}}}
	return serving, other
}

func TestPrintRGDStatus(t *testing.T) {
	serving, other := apiPropagations()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(other, serving).Build()
	var out bytes.Buffer
	if err := printRGDStatus(context.Background(), &out, hub, "webservice.kro.run"); err != nil {
		t.Fatal(err)
	}
	containsAll(t, out.String(),
		"ResourceGraphDefinition webservice.kro.run: WebService.kro.run, generation 2, served by APIPropagation a-public",
		"clusters: 1 serving generation 2, 1 failed",
		"instances: 3 (2 active, 1 in progress, 0 error, 0 deleting)",
		"not ready: spoke-1 shop/cart IN_PROGRESS (ResourcesNotReady: awaiting deployment)",
		"CLUSTER   PHASE           SERVED   INSTANCES   ACTIVE   IN-PROGRESS   ERROR   REASON           MESSAGE",
		"spoke-2   CompileFailed   1        1           1        0             0       SchemaNotFound   generation 2: no schema for Queue",
		"spoke-1   Serving         2        2           1        1             0       <none>",
	)
	if strings.Contains(out.String(), "other.kro.run") || strings.Contains(out.String(), "Pending") {
		t.Errorf("another API's row is printed:\n%s", out.String())
	}
}

func TestPrintRGDStatusNotServed(t *testing.T) {
	_, other := apiPropagations()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(other).Build()
	err := printRGDStatus(context.Background(), &bytes.Buffer{}, hub, "webservice.kro.run")
	if err == nil || !strings.Contains(err.Error(), "b-later: served by APIPropagation a-public") {
		t.Errorf("want the choosers' messages, got %v", err)
	}
	err = printRGDStatus(context.Background(), &bytes.Buffer{}, hub, "missing.kro.run")
	if err == nil || !strings.Contains(err.Error(), "no APIPropagation serves ResourceGraphDefinition missing.kro.run") {
		t.Errorf("want a hint to choose it, got %v", err)
	}
}

func TestPrintAPIPropagationStatus(t *testing.T) {
	serving, _ := apiPropagations()
	var out bytes.Buffer
	if err := printAPIPropagationStatus(&out, serving); err != nil {
		t.Fatal(err)
	}
	containsAll(t, out.String(),
		"APIPropagation a-public: 1 APIs, 2 clusters chosen, 1 serving, 1 failed; instances: 3 (2 active",
		"Serving  False  CompileFailed: webservice.kro.run on spoke-2",
		"webservice.kro.run   WebService.kro.run   2            1         1        3           2",
		"CLUSTER   API                  PHASE",
		"spoke-1   other.kro.run        Pending         <none>   <none>",
	)
}

// containsAll fails the test for each of wants that out does not contain.
func containsAll(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
