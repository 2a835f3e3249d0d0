package coalesce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// recorder keeps what a queue handled, in order, and lets a test hold the handler.
type recorder struct {
	mu      sync.Mutex
	handled []string
	hold    chan struct{} // when set, the first handle waits for it
	started chan struct{}
	held    bool
	fail    int // how many handles fail first
}

func (r *recorder) handle(_ context.Context, key string, value string) error {
	r.mu.Lock()
	hold, started := r.hold, r.started
	if r.held {
		hold = nil
	}
	r.held = true
	fail := r.fail > 0
	if fail {
		r.fail--
	}
	r.mu.Unlock()
	if hold != nil {
		close(started)
		<-hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handled = append(r.handled, key+"="+value)
	if fail {
		return errors.New("transient")
	}
	return nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.handled...)
}

func start(t *testing.T, r *recorder) *Queue[string, string] {
	t.Helper()
	q := &Queue[string, string]{Name: "test-" + t.Name(), Workers: 1, Handle: r.handle}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = q.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return q
}

// eventually waits until cond holds, within a deadline.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, "condition", func() error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	})
}

func TestLatestValueWins(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{})}
	q := start(t, r)
	q.Add("a", "1")
	<-r.started // "a=1" is being handled
	q.Add("a", "2")
	q.Add("a", "3")
	close(r.hold)
	eventually(t, func() bool { return len(r.seen()) == 2 })
	if got := r.seen(); got[0] != "a=1" || got[1] != "a=3" {
		t.Fatalf("handled %v, want [a=1 a=3]: a value queued during a handle replaces older ones and follows it", got)
	}
}

func TestFailureIsRetriedUnlessReplaced(t *testing.T) {
	r := &recorder{fail: 1}
	q := start(t, r)
	q.Add("a", "1")
	eventually(t, func() bool { return len(r.seen()) == 2 })
	if got := r.seen(); got[0] != "a=1" || got[1] != "a=1" {
		t.Fatalf("handled %v, want a=1 twice (failed, then retried)", got)
	}
}

func TestDropForgetsAQueuedValue(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{})}
	q := start(t, r)
	q.Add("a", "1")
	<-r.started
	q.Add("b", "1")
	q.Add("a", "2")
	q.Drop("a")
	close(r.hold)
	eventually(t, func() bool { return len(r.seen()) == 2 })
	q.Add("c", "1") // one worker: handled after a's queued turn
	eventually(t, func() bool { return len(r.seen()) == 3 })
	for _, h := range r.seen() {
		if h == "a=2" {
			t.Fatalf("handled %v: a dropped value was handled", r.seen())
		}
	}
}

// A value being handled when its key is dropped is not retried when it fails (without Drop,
// the rate limiter retries it within milliseconds, again and again).
func TestDropStopsARetry(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{}), fail: 1 << 30}
	q := start(t, r)
	q.Add("a", "1")
	<-r.started
	q.Drop("a")
	close(r.hold)
	eventually(t, func() bool { return len(r.seen()) == 1 })
	fleettest.Consistently(t, 500*time.Millisecond, "the dropped value is not retried", func() error {
		if got := r.seen(); len(got) > 1 {
			return fmt.Errorf("handled %v", got)
		}
		return nil
	})
}
