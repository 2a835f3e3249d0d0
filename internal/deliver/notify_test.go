package deliver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// within fails the test if fn does not return within d: a Notify that blocks would hang a
// deliver worker.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}

func owners(n int) []render.Owner {
	out := make([]render.Owner, n)
	for i := range out {
		out[i] = render.Owner{Kind: "Propagation", Namespace: "team", Name: fmt.Sprintf("p%d", i)}
	}
	return out
}

func newQueue() workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
}

func TestNotifierNeverBlocksAndLosesNothing(t *testing.T) {
	const n = 10_000 // more than any buffer a channel would have had
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var notifier Notifier

	// Before the controller starts: kept, one request per owner.
	within(t, 10*time.Second, "Notify before the controller started", func() {
		for _, o := range owners(n) {
			notifier.Notify(o)
			notifier.Notify(o)
		}
	})
	queue := newQueue()
	defer queue.ShutDown()
	if err := notifier.Source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	if got := queue.Len(); got != n {
		t.Fatalf("%d requests queued at start, want %d", got, n)
	}

	// Running, with no one taking from the queue: everything is queued at once.
	more := owners(2 * n)[n:]
	within(t, 10*time.Second, "Notify while no one takes from the queue", func() {
		for _, o := range more {
			notifier.Notify(o)
		}
	})
	if got := queue.Len(); got != 2*n {
		t.Fatalf("%d requests queued, want %d", got, 2*n)
	}
	req, _ := queue.Get()
	if req.Namespace != "team" || req.Name == "" {
		t.Fatalf("request %v does not name the owner", req)
	}
	queue.Done(req)
}

func TestNotifyAfterTheControllerStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var notifier Notifier
	queue := newQueue()
	if err := notifier.Source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	cancel()
	queue.ShutDown() // as the controller does when it stops
	within(t, 10*time.Second, "Notify after the controller stopped", func() {
		for _, o := range owners(10_000) {
			notifier.Notify(o)
		}
	})
}

// recordingQueue records the delayed adds a Notifier makes.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	mu    sync.Mutex
	after map[reconcile.Request][]time.Duration
}

func (q *recordingQueue) AddAfter(req reconcile.Request, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.after[req] = append(q.after[req], d)
}

// NotifyAfter hands the request and its delay to the controller's queue, which keeps one
// pending request per owner, at the earliest of the delays asked for (client-go's delaying
// queue): a burst of changes is one pass, d after the first. Before the controller starts it
// is Notify (kept, queued at start).
func TestNotifyAfterDelaysInTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var notifier Notifier
	early, later := owners(2)[0], owners(2)[1]
	notifier.NotifyAfter(early, time.Minute)
	queue := &recordingQueue{TypedRateLimitingInterface: newQueue(), after: map[reconcile.Request][]time.Duration{}}
	defer queue.ShutDown()
	if err := notifier.Source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	if n := queue.Len(); n != 1 {
		t.Fatalf("%d requests queued at start, want the one notified before", n)
	}
	for range 3 {
		notifier.NotifyAfter(later, 5*time.Second)
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: later.Namespace, Name: later.Name}}
	if got := queue.after[req]; len(got) != 3 || got[0] != 5*time.Second {
		t.Fatalf("delayed adds of %v: %v, want three of 5s", req, got)
	}
	if len(queue.after) != 1 {
		t.Fatalf("delayed adds %v, want %v's only", queue.after, later)
	}
}
