package propagation

import (
	"github.com/flotilla-dev/flotilla/internal/render"
)

// firstWarning reports whether a Warning of this reason about owner says something new (the
// first revision found too large to keep since the last kept, a new reason replicas are not
// placed), so that it is emitted once, not at every pass.
func (r *Reconciler) firstWarning(owner render.Owner, reason, about string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned[owner] == nil {
		r.warned[owner] = map[string]string{}
	}
	if r.warned[owner][reason] == about {
		return false
	}
	r.warned[owner][reason] = about
	return true
}
