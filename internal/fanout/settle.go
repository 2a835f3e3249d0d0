package fanout

import (
	"sync"
	"time"
)

// Settle tells an owner's status writer to wait while the deliveries of one revision are in
// flight, for a bounded time: a change that reaches every cluster within the bound costs one
// status write, not a Progressing write and then another. It is safe for concurrent use.
type Settle[K comparable] struct {
	mu    sync.Mutex
	since map[K]pending
}

// pending is a revision whose deliveries are in flight, and since when.
type pending struct {
	revision string
	since    time.Time
}

// Waiting reports whether key's status write should wait: its deliveries of revision are in
// flight (inFlight) and have been for less than bound. A new revision starts the clock again;
// nothing in flight forgets key.
func (s *Settle[K]) Waiting(key K, revision string, inFlight bool, bound time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !inFlight {
		delete(s.since, key)
		return false
	}
	p, ok := s.since[key]
	if !ok || p.revision != revision {
		if s.since == nil {
			s.since = map[K]pending{}
		}
		s.since[key] = pending{revision: revision, since: time.Now()}
		return true
	}
	return time.Since(p.since) < bound
}

// Forget drops key (its owner is gone).
func (s *Settle[K]) Forget(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.since, key)
}
