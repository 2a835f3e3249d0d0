package transparent

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-dev/flotilla/internal/fanout"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// saveRevision has the object as rendered kept as a revision (once per change, stored aside)
// and returns it as the base each cluster's copy is made from, which the cluster's record names
// (spec.work); nil when no revision is kept (no store, or one too large to keep).
func (r *Reconciler) saveRevision(u *unstructured.Unstructured, owner render.Owner, rendered *unstructured.Unstructured) *fanout.Base {
	if r.Revisions == nil {
		return nil
	}
	hash := render.HashOf(rendered)
	name, err := r.Revisions.SaveAside(r.ledgerOwner(u, owner), hash, []*unstructured.Unstructured{rendered}, nil, nil)
	if err != nil {
		if !revisions.NotKept(err) {
			ctrllog.Log.WithName("transparent").Error(err, "Cannot keep a revision", "owner", owner)
		}
		return nil
	}
	return &fanout.Base{Name: name, Digest: hash, Objects: []*unstructured.Unstructured{rendered}}
}
