package deliver

import "time"

// cacheLag is how long a write is trusted over a spoke cache that does not show it yet. Watch
// events arrive within milliseconds; the margin covers a busy machine.
const cacheLag = 10 * time.Second

// appliedRecord is a write this worker made.
type appliedRecord struct {
	hash string
	at   time.Time
}

// rememberApplied records that an object was just written with this hash.
func (w *clusterWorker) rememberApplied(key, hash string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.applied == nil {
		w.applied = map[string]appliedRecord{}
	}
	now := time.Now()
	w.applied[key] = appliedRecord{hash: hash, at: now}
	// Forget records the cache has certainly caught up with, so memory stays bounded by
	// the writes of the last cacheLag.
	if len(w.applied) > 1024 {
		for k, r := range w.applied {
			if now.Sub(r.at) > cacheLag {
				delete(w.applied, k)
			}
		}
	}
}

// recentlyApplied reports whether this worker wrote the object with this hash within cacheLag,
// so that a cache that lags behind the write does not cause a second, redundant write.
func (w *clusterWorker) recentlyApplied(key, hash string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.applied[key]
	return ok && r.hash == hash && time.Since(r.at) < cacheLag
}
