package propagation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestOwnerGoneWithoutCleanupIsForgotten: a Propagation whose finalizer was removed by hand
// (the usual answer to "Terminating while a spoke is down") disappears without its cleanup.
// Flotilla must stop enforcing its objects at once: one deleted on the spoke afterwards is not
// created again. Only the audit log proves it was not re-created and deleted in between.
func TestOwnerGoneWithoutCleanupIsForgotten(t *testing.T) {
	e := startEnv(t, map[string]string{"spoke-a": "eu"})
	ctx := context.Background()
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}})
	e.create(t, configMap("orphan", nil, "v"))
	e.create(t, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "team"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "eu"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "orphan"}}}})
	e.applied(t, "gone", flotillav1.ReasonApplied, 1)

	// The finalizer removed by hand, then the Propagation deleted: no cleanup runs.
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "team"}}
	e.updateHub(t, p, func() { p.Finalizers = nil })
	if err := e.hub.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "the Propagation gone from the hub", func() error {
		if err := e.hub.Get(ctx, client.ObjectKeyFromObject(p), &flotillav1.Propagation{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	since := time.Now()
	if err := e.spokes["spoke-a"].Delete(ctx, configMap("orphan", nil, "")); err != nil {
		t.Fatal(err)
	}
	fleettest.Consistently(t, 3*time.Second, "the deleted object is not created again", func() error {
		n := e.countWrites(t, "spoke-a", func(ev localfleet.AuditEvent) bool {
			return ev.ObjectRef.Name == "orphan" && ev.StageTimestamp.After(since)
		})
		if n != 0 {
			return fmt.Errorf("%d writes of the forgotten owner's object", n)
		}
		return nil
	})
}
