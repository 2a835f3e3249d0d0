package deliver

import "github.com/flotilla-dev/flotilla/internal/render"

// verified is what this worker last confirmed of an owner's objects on its cluster: which
// hash each object had, which were ready, and whether the owner's leftovers were pruned. A
// new delivery then only looks at what changed, so one edit among thousands of objects costs
// one object's work, not thousands. It is dropped when the cluster comes back from an outage
// (anything may have happened there) and, later, by drift events.
type verified struct {
	hashes map[string]string // render.Key → hash applied or confirmed
	ready  map[string]bool   // render.Key → ready (kstatus Current)
	pruned bool              // the last complete delivery pruned
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

// unchanged reports whether an object is as last confirmed.
func (v *verified) unchanged(key, hash string) bool {
	return v != nil && v.hashes[key] == hash
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

func keysOf(job Job) map[string]bool {
	out := make(map[string]bool, len(job.Objects))
	for _, o := range job.Objects {
		out[render.Key(o)] = true
	}
	return out
}
