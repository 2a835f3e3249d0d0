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
			for c.processNext(ctx, s) {
			}
		}()
	}
}

// lookLater is how long an instance whose pass its CEL cost stopped waits before it is looked
// at again if nothing it reads changes first. It is no retry (the same input costs the same)
// but a backstop for inputs whose changes queue nothing: a child kind the spoke cache cannot
// watch, the reads of a takeover from kro.
const lookLater = 10 * time.Minute

// lookAgainLater queues the instance again after lookLater, once per instance at a time; a
// pass that ends otherwise first calls it off (noLookLater).
func (s *spoke) lookAgainLater(req request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.later[req.Request]; t != nil {
		t.Stop()
	}
	if s.later == nil {
		s.later = map[Instance]*time.Timer{}
	}
	s.later[req.Request] = time.AfterFunc(lookLater, func() {
		s.mu.Lock()
		delete(s.later, req.Request)
		s.mu.Unlock()
		s.queue.Add(req) // nothing once the spoke's queue is shut down
	})
}

// noLookLater calls off the late look at an instance, if one is due.
func (s *spoke) noLookLater(inst Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.later[inst]; t != nil {
		t.Stop()
		delete(s.later, inst)
	}
}

// enqueue queues one of the spoke's instances.
func (s *spoke) enqueue(kind schema.GroupVersionKind, namespace, name string) {
	s.queue.Add(newRequest(s.name, kind, namespace, name))
}
