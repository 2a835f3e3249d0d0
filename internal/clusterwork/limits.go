package clusterwork

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// DefaultMaxInFlight is how many requests the endpoint serves at once unless told otherwise:
// far above what polling agents need (a request of an idle cluster is a cached token review
// and a 304), and low enough that a flood of made-up tokens, each of which costs the hub API
// server a TokenReview, cannot queue without bound.
const DefaultMaxInFlight = 64

// RetryAfter is what a request refused for load is told to wait.
const RetryAfter = time.Second

// Timeouts of the endpoint's server: a request must arrive whole within ReadTimeout, and an
// answer (the work of every owner of a cluster, resolved) be written within WriteTimeout.
const (
	ReadTimeout  = 30 * time.Second
	WriteTimeout = 2 * time.Minute
)

// limited serves next with at most the handler's MaxInFlight requests at once; the others are
// answered 429 at once, unread, with Retry-After. A request held waiting for a change gives its
// place back while it waits (await).
func (h *Handler) limited(next http.Handler) http.Handler {
	h.once.Do(func() {
		n := h.MaxInFlight
		if n <= 0 {
			n = DefaultMaxInFlight
		}
		h.inFlight = make(chan struct{}, n)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fromThisProcess(r) {
			next.ServeHTTP(w, r) // a replica's own agents: one per cluster it holds, no review to bound
			return
		}
		s := &slot{places: h.inFlight}
		if !s.try() {
			w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second)))
			refuse(w, h.Log.WithValues("path", r.URL.Path), http.StatusTooManyRequests,
				"the work endpoint is serving as many requests as it takes; retry after the time Retry-After says")
			return
		}
		defer s.release()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
	})
}

// slot is one request's place among those in flight.
type slot struct {
	places chan struct{}
	held   bool
}

type slotKey struct{}

// slotOf is the request's place; a request served without limited has one of its own.
func slotOf(ctx context.Context) *slot {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		return s
	}
	return &slot{places: make(chan struct{}, 1), held: false}
}

func (s *slot) try() bool {
	select {
	case s.places <- struct{}{}:
		s.held = true
	default:
	}
	return s.held
}

func (s *slot) release() {
	if s.held {
		<-s.places
		s.held = false
	}
}

// acquire waits for a place, and returns false if ctx ends first.
func (s *slot) acquire(ctx context.Context) bool {
	if s.held {
		return true
	}
	select {
	case s.places <- struct{}{}:
		s.held = true
		return true
	case <-ctx.Done():
		return false
	}
}
