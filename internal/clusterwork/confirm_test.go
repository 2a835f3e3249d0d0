package clusterwork

import (
	"context"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestItemsCarryThePruneConfirmation: the owner's flotilla.dev/confirm-prune reaches the agent
// in its item, and confirming on the hub changes the ETag, so a waiting agent gets it.
func TestItemsCarryThePruneConfirmation(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner, record("propagation.web.a", "a", owner, "owner-uid")).
		WithObjects(protected(t)...).Build()
	get := serve(t, &Handler{Hub: hub, Revisions: &revisions.Store{Reader: hub}})
	res, w, _ := get("a", "a", "")
	etag := res.Header.Get("ETag")
	if res.StatusCode != http.StatusOK || len(w.Items) != 1 || w.Items[0].PruneConfirmed != "" {
		t.Fatalf("before confirming: %d %+v", res.StatusCode, w.Items)
	}
	owner.Annotations = map[string]string{flotillav1.AnnotationConfirmPrune: "web-2"}
	if err := hub.Update(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	res, w, _ = get("a", "a", etag)
	if res.StatusCode != http.StatusOK || res.Header.Get("ETag") == etag {
		t.Fatalf("after confirming: status %d, ETag unchanged %v", res.StatusCode, res.Header.Get("ETag") == etag)
	}
	if len(w.Items) != 1 || w.Items[0].PruneConfirmed != "web-2" {
		t.Fatalf("after confirming: %+v", w.Items)
	}
}
