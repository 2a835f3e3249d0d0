package instances

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
)

// Each engaged spoke has its own queue and its own Options.Workers workers, so that what one
// spoke holds (however many instances, however costly their CEL, whoever wrote them) never
// makes another spoke's instances wait: workers are shared fairly per cluster, and the Go
// scheduler shares the CPU between them. A queue lives as long as its spoke's engagement:
// re-engaged, a spoke gets a new one, and lists every instance into it again.

// newQueue is a spoke's queue: a failed reconcile is retried with backoff, as kro retries.
func newQueue(cluster string) workqueue.TypedRateLimitingInterface[request] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[request](200*time.Millisecond, time.Minute),
		workqueue.TypedRateLimitingQueueConfig[request]{Name: "instances-" + cluster})
}

// startWorkersLocked starts a spoke's workers once the controller runs (c.mu held): they stop
// when the spoke is disengaged or the controller stops, and its queue is shut down.
func (c *Controller) startWorkersLocked(s *spoke) {
	if c.ctx == nil || c.stopped {
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	context.AfterFunc(ctx, func() {
		stop()
		s.queue.ShutDown()
	})
	c.workers.Add(c.opts.Workers)
	for range c.opts.Workers {
		go func() {
			defer c.workers.Done()
			for c.processNext(ctx, s.queue) {
			}
		}()
	}
}

// enqueue queues one of the spoke's instances.
func (s *spoke) enqueue(kind schema.GroupVersionKind, namespace, name string) {
	s.queue.Add(newRequest(s.name, kind, namespace, name))
}
