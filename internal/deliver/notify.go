package deliver

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// Notifier carries the deliverer's notifications (an owner's results changed) into the queue
// of the controller that owns them, and never blocks the deliver worker that sends one: a
// worker waiting on a controller that is busy, full or stopped would stall every delivery to
// its cluster. It puts requests straight into the controller's queue, which merges
// duplicates, so nothing is dropped however many arrive at once; before the controller
// starts they are kept (one per owner) and queued at start; after it stops they are dropped,
// as there is no one left to tell.
type Notifier struct {
	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[reconcile.Request]struct{}
	stopped bool
}

// Source is the controller's watch of the notifications; a Notifier serves one controller.
func (n *Notifier) Source() source.Source {
	return source.Func(n.start)
}

func (n *Notifier) start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	n.mu.Lock()
	n.queue = queue
	pending := n.pending
	n.pending = nil
	n.mu.Unlock()
	for req := range pending {
		queue.Add(req)
	}
	go func() {
		<-ctx.Done()
		n.mu.Lock()
		n.queue, n.stopped = nil, true
		n.mu.Unlock()
	}()
	return nil
}

// Notify asks for a reconcile of the object an owner names (its namespace and name). It
// returns at once.
func (n *Notifier) Notify(owner render.Owner) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.Namespace, Name: owner.Name}}
	n.mu.Lock()
	queue := n.queue
	if queue == nil && !n.stopped {
		if n.pending == nil {
			n.pending = map[reconcile.Request]struct{}{}
		}
		n.pending[req] = struct{}{}
	}
	n.mu.Unlock()
	if queue != nil {
		queue.Add(req) // never blocks; a no-op once the queue is shut down
	}
}

// NotifyAfter is Notify after d: the notifications of one owner within d are one, d after the
// first (the queue keeps the earliest of an item's delayed adds). Before the controller starts
// it is Notify.
func (n *Notifier) NotifyAfter(owner render.Owner, d time.Duration) {
	n.mu.Lock()
	queue := n.queue
	n.mu.Unlock()
	if queue == nil {
		n.Notify(owner)
		return
	}
	queue.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.Namespace, Name: owner.Name}}, d)
}
