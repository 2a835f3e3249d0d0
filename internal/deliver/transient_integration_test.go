package deliver_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A removal the spoke cannot answer (its API server is down, or restarting) is not a refusal:
// it is retried with backoff and done soon after the spoke is back, not after permanentRetry
// (5 minutes). Before, a prune that failed this way was taken for permanent. And it is
// retried as soon as the spoke answers, not when its backoff says: with a first retry set an
// hour away, only the worker's own wait for the spoke (answer.go) delivers it in time.
func TestRemovalWhileTheSpokeIsDownIsRetriedSoon(t *testing.T) {
	ctx, spoke, admin := oneSpoke(t, false, "team")
	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1, RetryBase: time.Hour})
	if err := d.Engage(ctx, "a", startSpoke(ctx, t, spoke)); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	objs := []*unstructured.Unstructured{rendered(t, owner, "team", "cm")}
	d.Submit(deliver.Job{Owner: owner, Cluster: "a", Objects: objs, Revision: render.Revision(objs), Prune: true})
	fleettest.Eventually(t, 30*time.Second, "delivered", func() error {
		if r, ok := d.Result(owner, "a"); !ok || !r.Complete {
			return fmt.Errorf("not complete: %+v", r)
		}
		return nil
	})

	spoke.Stop()
	d.Submit(deliver.Job{Owner: owner, Cluster: "a", Revision: "removed", Prune: true,
		PruneKinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		Strategy:   decide.Strategy{PruneBudget: decide.Unbudgeted}})
	fleettest.Eventually(t, 60*time.Second, "the removal fails while the spoke is down", func() error {
		r, ok := d.Result(owner, "a")
		if !ok || r.Revision != "removed" || r.Complete || r.Message == "" {
			return fmt.Errorf("no failed removal yet: %+v", r)
		}
		if r.Permanent || !r.Unanswered {
			t.Fatalf("a removal the spoke could not answer is taken for permanent, or for answered: %+v", r)
		}
		return nil
	})
	if err := spoke.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 90*time.Second, "removed once the spoke is back", func() error {
		if r, ok := d.Result(owner, "a"); !ok || !r.Complete || r.Revision != "removed" {
			return fmt.Errorf("not removed: %+v", r)
		}
		err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "cm"}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ConfigMap is still there (%v)", err)
		}
		return nil
	})
}
