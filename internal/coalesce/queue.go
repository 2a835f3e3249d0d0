package coalesce

import (
	"context"
	"sync"

	"k8s.io/client-go/util/workqueue"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Queue hands the latest value of each key to Handle, on Workers goroutines, once Start runs.
// The zero value is not usable: set Name, Workers and Handle.
type Queue[K comparable, V any] struct {
	// Name names the queue in logs and workqueue metrics.
	Name string
	// Workers is how many keys are handled at once.
	Workers int
	// Handle does the work for a key's latest value. An error is logged and retried with
	// backoff, unless a newer value is queued meanwhile.
	Handle func(ctx context.Context, key K, value V) error

	once    sync.Once
	queue   workqueue.TypedRateLimitingInterface[K]
	mu      sync.Mutex
	pending map[K]V
	// dropped counts each key's Drops, so that a value whose handling was in flight during a
	// Drop is not put back when it fails.
	dropped map[K]uint64
}

// Add queues value for key, replacing a value not yet handled, and returns at once.
func (q *Queue[K, V]) Add(key K, value V) {
	q.init()
	q.mu.Lock()
	q.pending[key] = value
	q.mu.Unlock()
	q.queue.Add(key)
}

// Drop forgets the value queued for key, if any; one being handled now is not retried.
func (q *Queue[K, V]) Drop(key K) {
	q.init()
	q.mu.Lock()
	delete(q.pending, key)
	q.dropped[key]++
	q.mu.Unlock()
}

// Start handles queued values until ctx ends (a manager.Runnable).
func (q *Queue[K, V]) Start(ctx context.Context) error {
	q.init()
	go func() {
		<-ctx.Done()
		q.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range max(q.Workers, 1) {
		wg.Go(func() {
			for {
				key, shutdown := q.queue.Get()
				if shutdown {
					return
				}
				q.handle(ctx, key)
				q.queue.Done(key)
			}
		})
	}
	wg.Wait()
	return nil
}

func (q *Queue[K, V]) handle(ctx context.Context, key K) {
	q.mu.Lock()
	value, ok := q.pending[key]
	delete(q.pending, key)
	drops := q.dropped[key]
	q.mu.Unlock()
	if !ok {
		q.queue.Forget(key)
		return
	}
	err := q.Handle(ctx, key, value)
	if err == nil {
		q.queue.Forget(key)
		return
	}
	q.mu.Lock()
	_, newer := q.pending[key]
	if !newer && q.dropped[key] == drops {
		q.pending[key] = value
	}
	q.mu.Unlock()
	if ctx.Err() == nil {
		ctrllog.FromContext(ctx).WithName(q.Name).Error(err, "retrying")
		q.queue.AddRateLimited(key)
	}
}

func (q *Queue[K, V]) init() {
	q.once.Do(func() {
		q.pending = map[K]V{}
		q.dropped = map[K]uint64{}
		q.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[K](),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: q.Name})
	})
}
