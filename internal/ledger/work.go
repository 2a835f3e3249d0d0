package ledger

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/coalesce"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A record's spec.work (what the cluster must run, package work) is written aside like its
// status, under a field manager of its own, so that Prepare's applies, which own the rest of
// the spec, never remove it: written ahead, every change of an owner would wait for one more
// hub write per cluster before its delivery.

// workFieldManager owns spec.work of records.
const workFieldManager = "flotilla-work"

// RecordWork queues what cluster must run of owner for its record's spec.work, and returns at
// once; a zero DeliveryWork (no revision) removes it. The write happens only if it changed; a
// record that does not exist is left alone.
func (l *Ledger) RecordWork(owner render.Owner, cluster string, work flotillav1.DeliveryWork) {
	l.workQueue().Add(pair{owner, cluster}, work)
}

// WriteWork is RecordWork written now, before what it says is delivered (a rollout's): the
// error says why the record could not say it.
func (l *Ledger) WriteWork(ctx context.Context, owner render.Owner, cluster string, work flotillav1.DeliveryWork) error {
	return l.writeWork(ctx, pair{owner, cluster}, work, true)
}

func (l *Ledger) workQueue() *coalesce.Queue[pair, flotillav1.DeliveryWork] {
	l.workOnce.Do(func() {
		l.works = &coalesce.Queue[pair, flotillav1.DeliveryWork]{Name: "ledger-work", Workers: reportWorkers,
			Handle: func(ctx context.Context, p pair, work flotillav1.DeliveryWork) error {
				return l.writeWork(ctx, p, work, false)
			}}
	})
	return l.works
}

// writeWork applies work into p's record, unless the record holds it already; ahead says a
// delivery waits for it. A record the ledger does not know of (removed, or never prepared) is
// left alone; one it prepared moments ago is written even if the cache does not show it yet.
func (l *Ledger) writeWork(ctx context.Context, p pair, work flotillav1.DeliveryWork, ahead bool) error {
	if _, exists, err := l.known(ctx, p.owner, p.cluster); err != nil || !exists {
		return err
	}
	if l.wroteWork(p, work) {
		return nil // written moments ago; the cache may not show it yet
	}
	key := l.Key(p.owner, p.cluster)
	var cached flotillav1.Delivery
	err := l.Hub.Get(ctx, key, &cached)
	switch {
	case err == nil && work.Revision == "" && cached.Spec.Work == nil:
		return nil
	case err == nil && cached.Spec.Work != nil && equality.Semantic.DeepEqual(*cached.Spec.Work, work):
		return nil
	}
	u := newRecord(key)
	u.Object["spec"] = map[string]any{} // applied without work, the field manager's work goes
	if work.Revision != "" {
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&work)
		if err != nil {
			return err
		}
		u.Object["spec"] = map[string]any{"work": spec}
	}
	if err := l.writer(ahead).Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(workFieldManager), client.ForceOwnership); err != nil {
		// Removed between the check and the write: the apply tried to create a record of
		// spec.work alone, which the API server refuses. Nothing is left to write.
		if _, exists, kerr := l.known(ctx, p.owner, p.cluster); apierrors.IsInvalid(err) && kerr == nil && !exists {
			return nil
		}
		return fmt.Errorf("record what cluster %s must run of %s (Delivery %s): %w", p.cluster, p.owner, key, err)
	}
	l.remember(p, func(w *ownWrite) { w.work = &work })
	return nil
}

// wroteWork reports whether the ledger wrote this very work into p's record within the cache's
// lag (and has not removed the record since).
func (l *Ledger) wroteWork(p pair, work flotillav1.DeliveryWork) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.written[p]
	return ok && !w.removed && w.work != nil && time.Since(w.at) < cacheLag && equality.Semantic.DeepEqual(*w.work, work)
}
