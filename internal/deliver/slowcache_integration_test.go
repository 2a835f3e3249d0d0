package deliver_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A kind whose spoke cache is slow to fill (many or large objects, a busy spoke: here, a wait
// shorter than any list) is read from the API server only until its cache has filled, and the
// cache goes on filling meanwhile. Before, the informer was stopped after the wait and the kind
// read directly for 10 minutes, as if Flotilla might not list it there: on a spoke whose list
// of a kind takes longer than the wait, the cache never filled (each new informer was stopped
// in turn), drift went unwatched and every delivery read every object from the API server.
func TestASlowSpokeCacheKeepsFillingWhileReadsGoDirect(t *testing.T) {
	ctx, spoke, _ := oneSpoke(t, false, "team")
	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1, CacheSyncTimeout: time.Nanosecond})
	cl := startSpoke(ctx, t, spoke)
	if err := d.Engage(ctx, "a", cl); err != nil {
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
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	fleettest.Eventually(t, 30*time.Second, "ConfigMaps read from the spoke cache again, once it has filled", func() error {
		if deliver.ReadsDirectly(d, "a", configMaps) {
			return fmt.Errorf("still read from the API server")
		}
		return nil
	})
}
