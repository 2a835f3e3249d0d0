package propagation_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestRecordsSayWhatEachClusterRuns: from the hub's durable objects alone (a cluster's
// Delivery record and the revision it names, read with a plain client, none of the
// controller's memory), what each cluster runs is recovered exactly: its share of divided
// replicas, its overrides, the older revision it is pinned to.
func TestRecordsSayWhatEachClusterRuns(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu", "spoke-b": "us"})
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	weight := int32(1)
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Replicas: &flotillav1.ReplicaPolicy{Mode: flotillav1.ReplicaModeWeighted,
			Clusters: []flotillav1.ClusterReplicas{{Name: "all", ClusterSelector: &metav1.LabelSelector{}, Weight: &weight}}}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(5))
	e.create(t, web)
	e.create(t, configMap("settings", nil, "v1"))
	p := propagationOf("work", flotillav1.PropagationStrategy{PruneBudgetPercent: ptr(int32(80))}, "Deployment/web", "ConfigMap/settings")
	p.Spec.Overrides = []flotillav1.Override{{Name: "us", ClusterNames: []string{"spoke-b"},
		MergePatch: &apiextensionsv1.JSON{Raw: []byte(`{"metadata":{"labels":{"region":"us"}}}`)}}}
	e.create(t, p)
	e.applied(t, "work", flotillav1.ReasonApplied, 2)
	first := e.revisions(t, "work", 1)[0]

	t.Run("each cluster's share and overrides", func(t *testing.T) {
		e.workReconstructs(t, "work", map[string]string{"spoke-a": first.Name, "spoke-b": first.Name})
	})

	t.Run("a cluster pinned to an older revision", func(t *testing.T) {
		e.updatePropagation(t, "work", func(p *flotillav1.Propagation) {
			p.Spec.RevisionPins = []flotillav1.RevisionPin{{Cluster: "spoke-a", Revision: first.Name}}
		})
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team"}}
		e.updateHub(t, settings, func() { settings.Data["v"] = "v2" })
		second := e.revisions(t, "work", 2)[1]
		e.waitValue(t, "spoke-b", "settings", "v2")
		e.workReconstructs(t, "work", map[string]string{"spoke-a": first.Name, "spoke-b": second.Name})
	})
}

// workReconstructs waits until each cluster's record names the revision want says, and what
// it says the cluster runs (the revision's objects with the record's changes) is what the
// cluster holds: the same objects, each with the hash Flotilla wrote there.
func (e *env) workReconstructs(t *testing.T, name string, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: name}
	store := &revisions.Store{Reader: e.hub}
	for cluster, revision := range want {
		fleettest.Eventually(t, wait, fmt.Sprintf("%s's record says what it runs", cluster), func() error {
			var records flotillav1.DeliveryList
			if err := e.hub.List(ctx, &records, client.InNamespace("team"), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
				return err
			}
			var w *flotillav1.DeliveryWork
			for i := range records.Items {
				if records.Items[i].Spec.Cluster == cluster {
					w = records.Items[i].Spec.Work
				}
			}
			if w == nil || w.Revision != revision {
				return fmt.Errorf("work %+v, want revision %s", w, revision)
			}
			objs, err := store.Work(ctx, owner, *w)
			if err != nil {
				return err
			}
			if len(objs) != 2 {
				return fmt.Errorf("%d objects", len(objs))
			}
			for _, obj := range objs {
				live := &unstructured.Unstructured{}
				live.SetGroupVersionKind(obj.GroupVersionKind())
				if err := e.spokes[cluster].Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
					return err
				}
				if got, want := render.HashOf(live), render.HashOf(obj); got != want {
					return fmt.Errorf("%s: the cluster holds hash %s, the record says %s", render.Key(obj), got, want)
				}
			}
			if w.Strategy.PruneBudgetPercent == nil || *w.Strategy.PruneBudgetPercent != 80 {
				return fmt.Errorf("strategy %+v", w.Strategy)
			}
			return nil
		})
	}
}
