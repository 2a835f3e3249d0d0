package deliver

// waitFor records that owner wants the object with this render.Key, which another owner holds
// (decide.ErrHeld): when the holder lets go on this cluster, owner is delivered again at once
// instead of after the long retry of a permanent failure.
func (w *clusterWorker) waitFor(key string, owner pairKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.claims == nil {
		w.claims = map[string]map[pairKey]bool{}
	}
	if w.claims[key] == nil {
		w.claims[key] = map[pairKey]bool{}
	}
	w.claims[key][owner] = true
}

// released wakes the owners waiting for an object whose holder let go of it.
func (w *clusterWorker) released(key string) {
	w.mu.Lock()
	waiting := w.claims[key]
	delete(w.claims, key)
	w.mu.Unlock()
	for owner := range waiting {
		w.seen.Confirm(owner, nil)
		w.queue.Add(owner)
	}
}
