package deliver

// verified is what this worker last confirmed of an owner's objects on its cluster: which
// hash each object had, which were ready, which were found drifted and left so, and whether
// the owner's leftovers were pruned. A new delivery then only looks at what changed, so one
// edit among thousands of objects costs one object's work, not thousands. Spoke watch events
// mark the objects they touch dirty (see drift.go); the whole record is dropped when the
// cluster comes back from an outage and on every periodic verification.
//
// A verified record is never modified after it is stored: deliveries read it without locks.
type verified struct {
	hashes  map[string]string // render.Key → hash applied or confirmed
	ready   map[string]bool   // render.Key → ready (kstatus Current)
	drifted map[string]Drift  // render.Key → drift found and left (Report, ApplyOnce)
	pruned  bool              // the last complete delivery pruned
	stale   map[string]bool   // render.Key → changed on the cluster since: look again
}

func newVerified() *verified {
	return &verified{hashes: map[string]string{}, ready: map[string]bool{}, drifted: map[string]Drift{}}
}

func (w *clusterWorker) verifiedOf(owner pairKey) *verified {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verified[owner]
}

func (w *clusterWorker) setVerified(owner pairKey, v *verified) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verified == nil {
		w.verified = map[pairKey]*verified{}
	}
	w.verified[owner] = v
}

// takeVerified returns what was confirmed of owner, with the objects spoke events marked
// dirty since then to be looked at again, and clears those marks.
func (w *clusterWorker) takeVerified(owner pairKey) *verified {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.verified[owner]
	dirty := w.dirty[owner]
	delete(w.dirty, owner)
	if v == nil || len(dirty) == 0 {
		return v
	}
	out := *v
	out.stale = dirty
	return &out
}

// unchanged reports whether an object is as last confirmed.
func (v *verified) unchanged(key, hash string) bool {
	return v != nil && !v.stale[key] && v.hashes[key] == hash
}

// known reports whether an object was confirmed on the cluster before.
func (v *verified) known(key string) bool {
	if v == nil {
		return false
	}
	_, ok := v.hashes[key]
	return ok
}

// lostNothing reports whether every object confirmed before is still wanted: if so, and the
// last delivery pruned, nothing new can be left to prune.
func (v *verified) lostNothing(want map[string]bool) bool {
	if v == nil || !v.pruned {
		return false
	}
	for k := range v.hashes {
		if !want[k] {
			return false
		}
	}
	return true
}
