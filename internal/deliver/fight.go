package deliver

import (
	"context"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/flotilla-dev/flotilla/internal/drift"
)

// A fight is someone on a cluster changing an object back after each of Flotilla's drift
// corrections. Corrections of one object back off (drift.Backoff) once they are undone, and
// after drift.FightThreshold undone in a row the object is reported as fighting: in its
// owner's result, and once per fight through Options.OnDrift. Meanwhile Flotilla corrects it
// only when the backoff ends (at most every drift.MaxBackoff), or at once when the desired
// object changes on the hub, which starts its history afresh. The report ends when a
// correction holds for drift.FightWindow.

// fight is what a worker remembers of the corrections of one object.
type fight struct {
	owner     pairKey
	hash      string // the desired hash the history is about
	history   drift.Corrections
	last      Drift // the latest drift corrected or held: fields and who made it
	announced bool  // the fight was reported through OnDrift
}

// undoneLocked records that an object Flotilla corrected lately was found drifted again, and
// returns how long its next correction waits and whether this drift made it a fight.
func (w *clusterWorker) undoneLocked(key, hash string, now time.Time) (wait time.Duration, started bool) {
	f := w.memory.fights[key]
	if f == nil || f.hash != hash {
		return 0, false
	}
	started = f.history.Undone(now)
	return f.history.Wait(now), started
}

// held decides whether the correction d of an object may be made now. If so it fills in who
// made the drift, unless d names it, and returns nil. If the object's corrections are backing
// off, the object is looked at again when the wait ends and the drift is returned as held, for
// the delivery to leave as it is.
func (w *clusterWorker) held(ctx context.Context, cl cluster.Cluster, owner pairKey, key, hash string, desired *unstructured.Unstructured, d *Drift) *Drift {
	w.mu.Lock()
	wait, _ := w.undoneLocked(key, hash, time.Now())
	var known Drift
	if f := w.memory.fights[key]; f != nil && f.hash == hash {
		known = f.last
	}
	w.mu.Unlock()
	if !d.Deleted && d.Manager == "" {
		d.Manager = known.Manager
		if d.Manager == "" || !equalStrings(known.Fields, d.Fields) {
			d.Manager = w.managerOf(ctx, cl, desired, d.Fields)
		}
	}
	if wait == 0 {
		return nil
	}
	w.mu.Lock()
	if f := w.memory.fights[key]; f != nil && f.hash == hash {
		f.last = *d
	}
	if w.dirty == nil {
		w.dirty = map[pairKey]map[string]bool{}
	}
	if w.dirty[owner] == nil {
		w.dirty[owner] = map[string]bool{}
	}
	w.dirty[owner][key] = true
	w.mu.Unlock()
	w.queue.AddAfter(owner, wait)
	h := *d
	h.Corrected, h.held = false, true
	return &h
}

// corrected records the correction d of an object, just written. A correction made while
// the object is fighting is marked so: the fight was reported once, its corrections are not.
func (w *clusterWorker) corrected(owner pairKey, key, hash string, d *Drift) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweepFightsLocked(now)
	if w.memory.fights == nil {
		w.memory.fights = map[string]*fight{}
	}
	f := w.memory.fights[key]
	if f == nil || f.hash != hash || f.owner != owner {
		f = &fight{owner: owner, hash: hash}
		w.memory.fights[key] = f
	}
	d.Fighting = f.history.Fighting(now)
	f.history.Corrected(now)
	f.last = *d
}

// sweepFightsLocked forgets histories that say nothing any more: the last correction held
// for drift.FightWindow, or the object is no longer delivered as it was.
func (w *clusterWorker) sweepFightsLocked(now time.Time) {
	for key, f := range w.memory.fights {
		if d := w.desiredLocked(f.owner, key); d == nil || hashOf(d) != f.hash || f.history.Settled(now) {
			delete(w.memory.fights, key)
		}
	}
}

// reportFights completes a delivery's result with the objects of its owner that are fighting,
// reports each new fight through OnDrift, and makes sure the owner is looked at again when a
// fight may end, so that its report ends too.
func (w *clusterWorker) reportFights(job Job, ids []objectID, res *Result) {
	now := time.Now()
	var fighting, announce []Drift
	var settles time.Time
	w.mu.Lock()
	for _, id := range ids {
		if len(w.memory.fights) == 0 {
			break
		}
		f := w.memory.fights[id.key]
		if f == nil {
			continue
		}
		if f.owner != job.Owner || f.hash != id.hash || f.history.Settled(now) {
			delete(w.memory.fights, id.key)
			continue
		}
		if !f.history.Fighting(now) {
			continue
		}
		d := f.last
		d.Corrected, d.held, d.Fighting = false, false, true
		fighting = append(fighting, d)
		if !f.announced {
			f.announced = true
			announce = append(announce, d)
		}
		if at := f.history.SettlesAt(); !at.IsZero() && (settles.IsZero() || at.Before(settles)) {
			settles = at
		}
	}
	w.mu.Unlock()
	if !settles.IsZero() {
		w.queue.AddAfter(job.Owner, settles.Sub(now))
	}
	if w.d.opts.OnDrift != nil {
		for _, d := range announce {
			w.d.opts.OnDrift(job.Owner, w.name, d)
		}
	}
	res.Fighting = len(fighting)
	if len(fighting) == 0 {
		return
	}
	sort.Slice(fighting, func(i, j int) bool { return fighting[i].Object < fighting[j].Object })
	if len(fighting) > maxDriftDetails {
		fighting = fighting[:maxDriftDetails]
	}
	res.FightingObjects = fighting
}
