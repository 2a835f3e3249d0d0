package deliver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/observe"
)

// readinessRecheck is how often a delivered but not yet ready set is looked at again, as a
// backstop: spoke watch events bring a change of readiness at once (observe.Cluster.Changed).
// The look reads the spoke cache only, but a fleet of workloads that never become ready (no
// nodes, a crash loop) would otherwise cost the hub CPU every second.
const readinessRecheck = 15 * time.Second

// readiness counts the delivered objects that are ready in the spoke cache, at the generation
// this delivery wrote, as package observe judges them, and describes the first that is not.
func (w *clusterWorker) readiness(ctx context.Context, cl cluster.Cluster, objs []*unstructured.Unstructured, ids []observe.Object, prev, next *observe.Confirmed) (int, string) {
	read := func(desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(desired.GroupVersionKind())
		_, err := w.readGet(ctx, cl, client.ObjectKeyFromObject(desired), live)
		return live, err
	}
	return w.seen.Readiness(objs, ids, prev, next, read)
}
