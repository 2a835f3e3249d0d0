package observe

import (
	"sort"
	"time"

	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A fight is someone on a cluster changing an object back after each of Flotilla's drift
// corrections. Corrections of one object back off (drift.Backoff) once they are undone, and
// after drift.FightThreshold undone in a row the object is reported as fighting: in its
// owner's result, and once per fight. Meanwhile Flotilla corrects it only when the backoff
// ends (at most every drift.MaxBackoff), or at once when the desired object changes on the
// hub, which starts its history afresh. The report ends when a correction holds for
// drift.FightWindow.

// fight is what is remembered of the corrections of one object.
type fight struct {
	owner     render.Owner
	hash      string // the desired hash the history is about
	history   drift.Corrections
	last      Drift // the latest drift corrected or held: fields and who made it
	announced bool  // the fight was reported
}

// Undone records that an object Flotilla corrected lately (at this desired hash) was found
// drifted again, and returns how long its next correction waits and the last drift known of
// it (who made it, when named).
func (c *Cluster) Undone(key, hash string) (wait time.Duration, last Drift) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wait, _ = c.undoneLocked(key, hash, time.Now())
	if f := c.fights[key]; f != nil && f.hash == hash {
		last = f.last
	}
	return wait, last
}

// undoneLocked is Undone; started says this drift made the object fighting.
func (c *Cluster) undoneLocked(key, hash string, now time.Time) (wait time.Duration, started bool) {
	f := c.fights[key]
	if f == nil || f.hash != hash {
		return 0, false
	}
	started = f.history.Undone(now)
	return f.history.Wait(now), started
}

// Hold records a correction that waits for its backoff: d is the fight's latest drift, and the
// object is marked for another look by the next delivery (queued for when the wait ends).
func (c *Cluster) Hold(owner render.Owner, key, hash string, d Drift) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.fights[key]; f != nil && f.hash == hash {
		f.last = d
	}
	c.touchLocked(owner, key)
}

// Corrected records the correction d of an object, just written. A correction made while the
// object is fighting is marked so: the fight was reported once, its corrections are not.
// Histories that say nothing any more are forgotten (wanted tells which objects are still
// delivered as they were).
func (c *Cluster) Corrected(owner render.Owner, key, hash string, d *Drift, wanted Wanted) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, f := range c.fights {
		if h, ok := wanted(f.owner, k); !ok || h != f.hash || f.history.Settled(now) {
			delete(c.fights, k)
		}
	}
	if c.fights == nil {
		c.fights = map[string]*fight{}
	}
	f := c.fights[key]
	if f == nil || f.hash != hash || f.owner != owner {
		f = &fight{owner: owner, hash: hash}
		c.fights[key] = f
	}
	d.Fighting = f.history.Fighting(now)
	f.history.Corrected(now)
	f.last = *d
}

// Object is one desired object of a delivery: its render.Key and hash.
type Object struct {
	Key, Hash string
}

// Fights returns the objects of owner (among objs) that are fighting, sorted, those whose
// fight is news (to be reported once), and when the first fight may end (zero if none), so
// the owner is looked at again then and its report ends too.
func (c *Cluster) Fights(owner render.Owner, objs []Object) (fighting, news []Drift, settles time.Time) {
	now := time.Now()
	c.mu.Lock()
	for _, o := range objs {
		if len(c.fights) == 0 {
			break
		}
		f := c.fights[o.Key]
		if f == nil {
			continue
		}
		if f.owner != owner || f.hash != o.Hash || f.history.Settled(now) {
			delete(c.fights, o.Key)
			continue
		}
		if !f.history.Fighting(now) {
			continue
		}
		d := f.last
		d.Corrected, d.Held, d.Fighting = false, false, true
		fighting = append(fighting, d)
		if !f.announced {
			f.announced = true
			news = append(news, d)
		}
		if at := f.history.SettlesAt(); !at.IsZero() && (settles.IsZero() || at.Before(settles)) {
			settles = at
		}
	}
	c.mu.Unlock()
	sort.Slice(fighting, func(i, j int) bool { return fighting[i].Object < fighting[j].Object })
	return fighting, news, settles
}
