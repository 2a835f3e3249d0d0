package transparent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// invalidPins is a flotilla.dev/revision-pins annotation that cannot be read.
type invalidPins struct{ error }

// input is what the per-cluster computation reads of the object's pass, but what gather and
// loadPins add: its latest revision (kept in the store r.Revisions, when there is one), the
// pins its flotilla.dev/revision-pins annotation sets, its Placement's override rules and the
// chosen clusters' facts.
func (r *Reconciler) input(ctx context.Context, u *unstructured.Unstructured, owner render.Owner, placement *flotillav1.Placement,
	decisions []string, rendered *unstructured.Unstructured, records map[string]*flotillav1.Delivery) (percluster.Input, error) {
	pins, err := flotillav1.ParseRevisionPins(u.GetAnnotations()[flotillav1.AnnotationRevisionPins])
	if err != nil {
		return percluster.Input{}, invalidPins{err}
	}
	pc := percluster.Input{Owner: owner, Placement: placement, Chosen: decisions, DivideByDefault: true, Pins: pins,
		Rules: r.rules.Get(placement.Namespace+"/"+placement.Name, placement.Generation, placement.Spec.Overrides),
		Facts: r.factsOf(ctx, decisions)}
	pc.Latest = r.saveRevision(u, owner, rendered, pins, records)
	pc.LatestName = revisions.Name(owner, pc.Latest.Digest)
	return pc, nil
}

// loadPins loads from store the revisions pc.Pins hold clusters at: the object's own pins and
// those of a rollout, once per pass.
func loadPins(ctx context.Context, store *revisions.Store, pc *percluster.Input) error {
	if len(pc.Pins) == 0 {
		return nil
	}
	if store == nil {
		return fmt.Errorf("%s %s/%s holds clusters at kept revisions (%s, or a rollout), but this hub keeps no revisions",
			pc.Owner.Kind, pc.Owner.Namespace, pc.Owner.Name, flotillav1.AnnotationRevisionPins)
	}
	pc.Pinned = store.Pinned(ctx, pc.Owner, pc.Pins, pc.LatestName)
	return nil
}

// saveRevision has the object as rendered kept as a revision (once per change, stored aside,
// the revisions pins name and those the records say the clusters run kept too: a rollout holds
// clusters at them) and returns it as the revision each cluster's copy is made
// from, which the cluster's record names (spec.work); its Name is "" when no revision is kept
// (no store, or one too large).
func (r *Reconciler) saveRevision(u *unstructured.Unstructured, owner render.Owner, rendered *unstructured.Unstructured, pins []flotillav1.RevisionPin,
	records map[string]*flotillav1.Delivery) percluster.Revision {
	objs := []*unstructured.Unstructured{rendered}
	latest := percluster.Revision{Digest: render.Revision(objs), Objects: objs}
	if r.Revisions == nil {
		return latest
	}
	keep := map[string]bool{}
	for _, p := range pins {
		keep[p.Revision] = true
	}
	for _, rec := range records {
		if w := rec.Spec.Work; w != nil && w.Revision != "" {
			keep[w.Revision] = true
		}
	}
	name, err := r.Revisions.SaveAside(r.ledgerOwner(u, owner), latest.Digest, objs, nil, keep)
	if err != nil {
		if !revisions.NotKept(err) {
			ctrllog.Log.WithName("transparent").Error(err, "Cannot keep a revision", "owner", owner)
		}
		return latest
	}
	latest.Name = name
	return latest
}
