package deliver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
)

// waveTimeout bounds the wait for one deletion wave to be gone within a delivery; a wave that
// takes longer (finalizers of its own) fails the delivery, which is retried with backoff and
// deletes nothing of the lower waves meanwhile.
const waveTimeout = 30 * time.Second

// pruneInWaves deletes objects wave by wave (Job.PruneOrder): the highest wave first, and the
// next only once every object of the previous one is gone from the API server, as kro removes
// an instance's resources in reverse dependency order. Objects already terminating are not
// deleted again, only waited for.
func (w *clusterWorker) pruneInWaves(ctx context.Context, cl cluster.Cluster, annotation string, objs []*unstructured.Unstructured) error {
	for _, wave := range deletionWaves(annotation, objs) {
		var todo []*unstructured.Unstructured
		for _, o := range wave.objects {
			if o.GetDeletionTimestamp() == nil {
				todo = append(todo, o)
			}
		}
		if err := w.deleteAll(ctx, cl, todo); err != nil {
			return err
		}
		if err := waitGone(ctx, cl, wave.objects); err != nil {
			return fmt.Errorf("deletion wave %d: %w (the lower waves wait)", wave.order, err)
		}
	}
	return nil
}

// wave is the objects that share one deletion order.
type wave struct {
	order   int
	objects []*unstructured.Unstructured
}

// deletionWaves groups objects by the integer in their annotation, highest first; a missing,
// malformed or non-positive order is wave 0, removed last.
func deletionWaves(annotation string, objs []*unstructured.Unstructured) []wave {
	byOrder := map[int][]*unstructured.Unstructured{}
	for _, o := range objs {
		order, err := strconv.Atoi(o.GetAnnotations()[annotation])
		if err != nil || order < 0 {
			order = 0
		}
		byOrder[order] = append(byOrder[order], o)
	}
	orders := make([]int, 0, len(byOrder))
	for order := range byOrder {
		orders = append(orders, order)
	}
	slices.Sort(orders)
	slices.Reverse(orders)
	out := make([]wave, len(orders))
	for i, order := range orders {
		out[i] = wave{order: order, objects: byOrder[order]}
	}
	return out
}

// waitGone waits until none of objs exists any more (an object of the same name with another
// uid is a new one, not the one deleted), reading the API server: the spoke cache may lag.
func waitGone(ctx context.Context, cl cluster.Cluster, objs []*unstructured.Unstructured) error {
	pending := slices.Clone(objs)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, waveTimeout, true, func(ctx context.Context) (bool, error) {
		var still []*unstructured.Unstructured
		for _, o := range pending {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(o.GroupVersionKind())
			err := cl.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(o), live)
			switch {
			case kerrors.IsNotFound(err):
			case err != nil:
				return false, err
			case live.GetUID() != o.GetUID():
			default:
				still = append(still, o)
			}
		}
		pending = still
		return len(pending) == 0, nil
	})
	if err != nil && len(pending) > 0 {
		return fmt.Errorf("%s not gone yet", decide.Describe(pending[0]))
	}
	return err
}
