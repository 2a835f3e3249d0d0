package ledger

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// TestPulled: a status change of a pull cluster's record wakes its owner; one of a push
// cluster's (the ledger's own report), or a record whose status did not change, does not.
func TestPulled(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull}},
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "core"}},
	).Build()
	p := Pulled(Agents{Hub: hub})
	update := func(cluster string, before, after flotillav1.DeliveryStatus) bool {
		old := &flotillav1.Delivery{Spec: flotillav1.DeliverySpec{Cluster: cluster}, Status: before}
		nu := old.DeepCopy()
		nu.Status = after
		return p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: nu})
	}
	reported := flotillav1.DeliveryStatus{Revision: "d1", Applied: 1, Ready: 1, Count: 1}
	if !update("edge", flotillav1.DeliveryStatus{}, reported) {
		t.Error("a pull cluster's new result does not pass")
	}
	if update("edge", reported, reported) {
		t.Error("an unchanged status passes")
	}
	if update("core", flotillav1.DeliveryStatus{}, reported) {
		t.Error("a push cluster's result passes")
	}
	if update("gone", flotillav1.DeliveryStatus{}, reported) {
		t.Error("a record of a cluster that is not there passes")
	}
	if p.Create(event.CreateEvent{Object: &flotillav1.Delivery{}}) || p.Delete(event.DeleteEvent{Object: &flotillav1.Delivery{}}) {
		t.Error("creates or deletes pass (Changed handles deletes)")
	}
}
