package deliver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
)

// readinessRecheck is how often a delivered but not yet ready set is looked at again, as a
// backstop: spoke watch events bring a change of readiness at once (see changedLocked). The
// look reads the spoke cache only, but a fleet of workloads that never become ready (no
// nodes, a crash loop) would otherwise cost the hub CPU every second.
const readinessRecheck = 15 * time.Second

// readiness counts the objects that kstatus finds Current in the spoke cache, at the generation
// this delivery wrote, and describes the first one that is not. Objects that were ready and have not changed since are not looked at
// again; next records what is ready now.
func (w *clusterWorker) readiness(ctx context.Context, cl cluster.Cluster, objs []*unstructured.Unstructured, ids []objectID, prev, next *verified) (int, string) {
	ready, first := 0, ""
	for i, desired := range objs {
		key := ids[i].key
		if prev != nil && prev.ready[key] && prev.unchanged(key, ids[i].hash) {
			ready++
			next.ready[key] = true
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(desired.GroupVersionKind())
		if _, err := w.readGet(ctx, cl, client.ObjectKeyFromObject(desired), live); err != nil {
			if !apierrors.IsNotFound(err) || !w.recentlyApplied(key, ids[i].hash) {
				if first == "" {
					first = decide.Describe(desired) + ": not observed yet"
				}
				continue
			}
			// Written by this delivery moments ago and not in the cache yet: judge what was
			// written. Kinds without status (ConfigMaps and the like) are ready as applied;
			// the others have no status yet, so are not.
			live = desired
		} else if w.cacheBehind(key, hashOf(live)) {
			// Written by this delivery moments ago, and the cache still shows what was there
			// before: that object's status says nothing of the generation written (a Deployment
			// scaled up is not Ready because its old replicas were).
			if first == "" {
				first = decide.Describe(desired) + ": the written generation is not observed yet"
			}
			continue
		}
		res, err := status.Compute(live)
		if err == nil && res.Status == status.CurrentStatus {
			ready++
			next.ready[key] = true
			continue
		}
		if first == "" {
			if err != nil {
				first = fmt.Sprintf("%s: %v", decide.Describe(desired), err)
			} else {
				first = fmt.Sprintf("%s: %s: %s", decide.Describe(desired), res.Status, res.Message)
			}
		}
	}
	return ready, first
}
