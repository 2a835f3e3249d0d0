package fanout

import (
	"context"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/work"
)

type workKey struct {
	owner   render.Owner
	cluster string
}

// recordWork has the cluster's record say what it must run (spec.work), when want names its
// base revision, and nothing when it does not: aside, or now (the write's error returned) with
// ahead. The cluster's changes are computed only when the revision or what the cluster runs
// changed since the last pass: a pass that changes nothing costs a comparison.
func (f *Fanout) recordWork(ctx context.Context, owner render.Owner, cluster string, want Want, declared flotillav1.PropagationStrategy, ahead bool) error {
	key := workKey{owner, cluster}
	f.mu.Lock()
	last, known := f.work[key]
	f.mu.Unlock()
	if want.Base == nil || want.Base.Name == "" {
		// No kept revision to name: the record says nothing rather than something stale,
		// asked once (an owner kind without revisions costs no write, nor a queued check, per pass).
		if !known || last.Revision != "" {
			f.clearWork(owner, cluster)
		}
		return nil
	}
	next := flotillav1.DeliveryWork{Revision: want.Base.Name, Digest: want.Revision, Strategy: declared}
	switch {
	case known && last.Revision == next.Revision && last.Digest == next.Digest:
		next.Changes = last.Changes
	case want.Revision != want.Base.Digest:
		changes, err := work.Changes(want.Base.Objects, want.Objects)
		if err != nil {
			// What the cluster must run is still delivered; only its record lacks it.
			ctrllog.Log.WithName("fanout").Error(err, "Cannot record what the cluster must run", "owner", owner, "cluster", cluster)
			f.clearWork(owner, cluster)
			return nil
		}
		next.Changes = changes
	}
	if ahead {
		if err := f.Ledger.WriteWork(ctx, owner, cluster, next); err != nil {
			return err
		}
	}
	f.mu.Lock()
	if f.work == nil {
		f.work = map[workKey]flotillav1.DeliveryWork{}
	}
	f.work[key] = next
	f.mu.Unlock()
	if !ahead {
		f.Ledger.RecordWork(owner, cluster, next)
	}
	return nil
}

// clearWork has the cluster's record say nothing of what it must run, and remembers it did.
func (f *Fanout) clearWork(owner render.Owner, cluster string) {
	f.mu.Lock()
	if f.work == nil {
		f.work = map[workKey]flotillav1.DeliveryWork{}
	}
	f.work[workKey{owner, cluster}] = flotillav1.DeliveryWork{}
	f.mu.Unlock()
	f.Ledger.RecordWork(owner, cluster, flotillav1.DeliveryWork{})
}

// forgetWork drops what was recorded of owner's work on cluster, and its removal (its record
// is gone).
func (f *Fanout) forgetWork(owner render.Owner, cluster string) {
	f.mu.Lock()
	delete(f.work, workKey{owner, cluster})
	delete(f.removing, workKey{owner, cluster})
	f.mu.Unlock()
}
