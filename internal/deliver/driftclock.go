package deliver

import (
	"sync"
	"time"
)

// driftClock times drift until its correction, for flotilla_drift_revert_duration_seconds:
// from the spoke watch event that first showed an object drifted to the write that put it
// back. A drift that is left (drift Report, mode ApplyOnce) keeps its start until it is
// corrected or its owner's delivery finds nothing drifted any more (it went away by itself).
type driftClock struct {
	mu    sync.Mutex
	since map[driftKey]time.Time
}

type driftKey struct {
	owner pairKey
	key   string // render.Key
}

// detected notes that the watches show owner's object drifted at now; the first sighting
// counts.
func (c *driftClock) detected(owner pairKey, key string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since == nil {
		c.since = map[driftKey]time.Time{}
	}
	if _, ok := c.since[driftKey{owner, key}]; !ok {
		c.since[driftKey{owner, key}] = now
	}
}

// reverted notes the correction of owner's object, written at now, and returns how long it
// was drifted (false: its drift was not seen by a watch).
func (c *driftClock) reverted(owner pairKey, key string, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start, ok := c.since[driftKey{owner, key}]
	if !ok {
		return 0, false
	}
	delete(c.since, driftKey{owner, key})
	return now.Sub(start), true
}

// forget drops every drift of owner still timed.
func (c *driftClock) forget(owner pairKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.since {
		if k.owner == owner {
			delete(c.since, k)
		}
	}
}
