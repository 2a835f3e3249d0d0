package deliver

import "time"

// cacheLag is how long a write is trusted over a spoke cache that does not show it yet. Watch
// events arrive within milliseconds; the margin covers a busy machine.
const cacheLag = 10 * time.Second

// appliedRecord is a write this worker made.
type appliedRecord struct {
	hash  string
	owner pairKey
	at    time.Time
}

// rememberApplied records that owner just wrote an object with this hash. If another owner
// wrote the same object within cacheLag, it returns that owner: the two deliveries may have
// raced, each reading the object before the other's write, and the other must look again.
func (w *clusterWorker) rememberApplied(key, hash string, owner pairKey) (other pairKey, raced bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.applied == nil {
		w.applied = map[string]appliedRecord{}
	}
	now := time.Now()
	if r, ok := w.applied[key]; ok && r.owner != owner && r.owner != (pairKey{}) && now.Sub(r.at) < cacheLag {
		other, raced = r.owner, true
	}
	w.applied[key] = appliedRecord{hash: hash, owner: owner, at: now}
	if !w.sweepPending {
		w.sweepPending = true
		time.AfterFunc(cacheLag, w.sweepApplied)
	}
	return other, raced
}

// sweepApplied forgets the records the cache has certainly caught up with, so memory holds
// only the writes of the last cacheLag, and runs again while records remain.
func (w *clusterWorker) sweepApplied() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for k, r := range w.applied {
		if now.Sub(r.at) >= cacheLag {
			delete(w.applied, k)
		}
	}
	w.sweepPending = len(w.applied) > 0
	if w.sweepPending {
		time.AfterFunc(cacheLag, w.sweepApplied)
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

// cacheBehind reports whether this worker wrote the object within cacheLag with another hash
// than the cache shows: the cache has not caught up with that write yet.
func (w *clusterWorker) cacheBehind(key, cachedHash string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.applied[key]
	return ok && r.hash != cachedHash && time.Since(r.at) < cacheLag
}

// rememberDeleted records that this worker deleted the object moments ago, so that a delivery
// reading the cache within cacheLag (one woken by the deletion, say) asks the API server
// instead of believing a cache that still shows the object.
func (w *clusterWorker) rememberDeleted(key string) {
	w.rememberApplied(key, "", pairKey{})
}
