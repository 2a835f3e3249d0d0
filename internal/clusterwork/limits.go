package clusterwork

import (
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
// answered 429 at once, unread, with Retry-After, and counted in the log at V(1).
func (h *Handler) limited(next http.Handler) http.Handler {
	h.once.Do(func() {
		n := h.MaxInFlight
		if n <= 0 {
			n = DefaultMaxInFlight
		}
		h.inFlight = make(chan struct{}, n)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case h.inFlight <- struct{}{}:
			defer func() { <-h.inFlight }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second)))
			refuse(w, h.Log.WithValues("path", r.URL.Path), http.StatusTooManyRequests,
				"the work endpoint is serving as many requests as it takes; retry after the time Retry-After says")
		}
	})
}
