package clusterwork

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// An agent asks with If-None-Match and ?waitSeconds=N: while its work is what it already has,
// the endpoint holds the request until one of the cluster's records changes, or N seconds
// (at most MaxWait) pass, and then answers (200 with the new work, or 304). So a hub change
// reaches a pull cluster in about the time the hub cache takes to see it, not a poll interval
// later, and an idle cluster costs one request per N seconds (OCM's agents moved from polling
// to watches for the same reason).

// MaxWait bounds how long a request is held waiting for a change: well under the server's
// WriteTimeout.
const MaxWait = 60 * time.Second

// maxWaitersPerCluster bounds the requests held for one cluster; more are answered at once.
const maxWaitersPerCluster = 4

// Changes tells the requests held for a cluster that its records changed. The zero value is
// ready to use; feed it with RecordHandler on the hub cache's Delivery informer.
type Changes struct {
	mu      sync.Mutex
	signals map[string]chan struct{} // closed at the cluster's next change
	waiters map[string]int
}

// Changed wakes every request held for cluster.
func (c *Changes) Changed(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.signals[cluster]; ok {
		close(ch)
		delete(c.signals, cluster)
	}
}

// hold registers a request for cluster's next change: the channel closes at it. ok is false when
// maxWaitersPerCluster requests are held already; done must be called once the request stops
// waiting.
func (c *Changes) hold(cluster string) (changed <-chan struct{}, done func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiters[cluster] >= maxWaitersPerCluster {
		return nil, nil, false
	}
	if c.signals == nil {
		c.signals, c.waiters = map[string]chan struct{}{}, map[string]int{}
	}
	ch, found := c.signals[cluster]
	if !found {
		ch = make(chan struct{})
		c.signals[cluster] = ch
	}
	c.waiters[cluster]++
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.waiters[cluster]--; c.waiters[cluster] <= 0 {
			delete(c.waiters, cluster)
		}
	}, true
}

// RecordHandler feeds c from Delivery records' events: a record added or deleted, or one whose
// spec (generation) or cluster label changed. Status writes wake nobody.
func (c *Changes) RecordHandler() toolscache.ResourceEventHandler {
	clusterOf := func(obj any) string {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if rec, ok := obj.(*flotillav1.Delivery); ok {
			return rec.Labels[flotillav1.LabelCluster]
		}
		return ""
	}
	changed := func(obj any) {
		if cluster := clusterOf(obj); cluster != "" {
			c.Changed(cluster)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { changed(obj) },
		UpdateFunc: func(before, after any) {
			b, ok1 := before.(*flotillav1.Delivery)
			a, ok2 := after.(*flotillav1.Delivery)
			if !ok1 || !ok2 || b.Generation != a.Generation || b.Labels[flotillav1.LabelCluster] != a.Labels[flotillav1.LabelCluster] {
				changed(before)
				changed(after)
			}
		},
		DeleteFunc: changed,
	}
}

// await holds a request until changed closes, ctx ends or wait passes, and reports whether
// changed closed. While it waits the request gives its place among those in flight back, and
// takes one again before it returns (false if ctx ended first), so that held requests never
// crowd out others.
func await(ctx context.Context, changed <-chan struct{}, wait time.Duration) (woke bool) {
	s := slotOf(ctx)
	s.release()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-changed:
		woke = true
	case <-timer.C:
	case <-ctx.Done():
	}
	return s.acquire(ctx) && woke
}

// WaitParameter is the query parameter with which a request asks to wait for a change.
const WaitParameter = "waitSeconds"

// waitOf is how long r asks to be held, at most MaxWait; 0 when it does not ask.
func waitOf(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get(WaitParameter)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: give a whole number of seconds (at most %d)", WaitParameter, v, int(MaxWait/time.Second))
	}
	return min(time.Duration(n)*time.Second, MaxWait), nil
}

// reviewUnavailable tells an error of a token review that did not happen (the hub API server
// unreachable, overloaded or failing) from a token the hub refused, so that an agent is told to
// retry (503) rather than that its token is bad (401).
func reviewUnavailable(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 500 || code == http.StatusTooManyRequests
	}
	return false
}
