package propagation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// saveRevision has the propagator's rendered objects kept as its latest revision (once per
// change, not per pass; stored aside, see revisions.Store.SaveAside) and returns the
// revision's name. The revisions pins name and those the chosen clusters run (running) are
// kept too: a rollout holds clusters at them. Its Secrets are kept without their values, with their sources (where
// they are read again when the revision is used). A revision too large to keep is not an error: the propagator delivers
// without history, and in.noHistory says why (from a later pass: the store finds it out aside).
func (r *Reconciler) saveRevision(p propagator, in *statusInput, rendered []*unstructured.Unstructured, sources map[string]revisions.Source,
	running map[string]fanout.Running) (string, error) {
	if len(rendered) == 0 {
		return "", nil // an empty selection is held, not a revision
	}
	keep := map[string]bool{}
	for _, pin := range p.spec.RevisionPins {
		keep[pin.Revision] = true
	}
	for _, run := range running {
		keep[run.Revision] = true
	}
	name, err := r.Revisions.SaveAside(p.ledgerOwner(), in.revision, rendered, sources, keep)
	if revisions.NotKept(err) {
		in.noHistory = err.Error()
		return "", nil
	}
	return name, err
}

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
