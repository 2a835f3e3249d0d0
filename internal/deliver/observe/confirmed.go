package observe

import "github.com/flotilla-dev/flotilla/internal/render"

// Confirmed is what one delivery of an owner confirmed on a cluster: which hash each object
// had, which were ready, which were found drifted and left so, the statuses written, and
// whether the owner's leftovers were pruned. The next delivery then looks only at what
// changed, so one edit among thousands of objects costs one object's work, not thousands.
//
// A Confirmed is never modified after it is stored (Cluster.Confirm): deliveries read it
// without locks.
type Confirmed struct {
	Hashes  map[string]string // render.Key → hash applied or confirmed
	Ready   map[string]bool   // render.Key → ready (kstatus Current)
	Drifted map[string]Drift  // render.Key → drift found and left (Report, ApplyOnce)
	Status  map[string]string // render.Key → hash of the status written or found there
	Pruned  bool              // the delivery pruned
	// Left are objects the owner no longer wants that an earlier delivery confirmed and no
	// prune has deleted yet (it was held, or not allowed): still the owner's (Owns).
	Left map[string]bool
	// Under names the rules the objects were confirmed under (the owner's strategy, as the
	// deliverer writes it): under other rules each is decided again (Unchanged says no).
	Under string
	// Stale are the objects spoke events touched since (render.Key): look again.
	Stale map[string]bool
}

// NewConfirmed returns an empty record, for a delivery to fill.
func NewConfirmed() *Confirmed {
	return &Confirmed{Hashes: map[string]string{}, Ready: map[string]bool{}, Drifted: map[string]Drift{}, Status: map[string]string{}}
}

// Unchanged reports whether an object is as last confirmed, under the same rules.
func (c *Confirmed) Unchanged(key, hash, under string) bool {
	return c != nil && c.Under == under && !c.Stale[key] && c.Hashes[key] == hash
}

// StatusOf returns the hash recorded under key in Status, "" when none.
func (c *Confirmed) StatusOf(key string) string {
	if c == nil {
		return ""
	}
	return c.Status[key]
}

// Known reports whether an object was confirmed on the cluster before.
func (c *Confirmed) Known(key string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Hashes[key]
	return ok
}

// Owns reports whether the owner is known to have an object on the cluster: a delivery
// confirmed it, and no prune has deleted it since. Only such objects, and those the owner
// wants now, are counted as its by the prune budget (decide.Leftovers): anyone who may write
// on the cluster can put an owner's marks on an object.
func (c *Confirmed) Owns(key string) bool {
	return c.Known(key) || (c != nil && c.Left[key])
}

// StillOwned is what of the owner's a delivery that wants want and did not prune leaves on
// the cluster, for its own Confirmed.Left: what was confirmed and is no longer wanted.
func (c *Confirmed) StillOwned(want func(key string) bool) map[string]bool {
	if c == nil {
		return nil
	}
	var out map[string]bool
	add := func(k string) {
		if want(k) {
			return
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[k] = true
	}
	for k := range c.Hashes {
		add(k)
	}
	for k := range c.Left {
		add(k)
	}
	return out
}

// LostNothing reports whether every object confirmed before is still wanted: if so, and the
// last delivery pruned, nothing new can be left to prune.
func (c *Confirmed) LostNothing(want func(key string) bool) bool {
	if c == nil || !c.Pruned {
		return false
	}
	for k := range c.Hashes {
		if !want(k) {
			return false
		}
	}
	return true
}

// Take returns what was confirmed of owner, with the objects spoke events touched since marked
// Stale, and clears those marks: the delivery that takes them looks at them again.
func (c *Cluster) Take(owner render.Owner) *Confirmed {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.confirmed[owner]
	touched := c.touched[owner]
	delete(c.touched, owner)
	if v == nil || len(touched) == 0 {
		return v
	}
	out := *v
	out.Stale = touched
	return &out
}

// Confirm stores what a delivery of owner confirmed; nil forgets it, so the next delivery
// looks at every object again.
func (c *Cluster) Confirm(owner render.Owner, v *Confirmed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v == nil {
		delete(c.confirmed, owner)
		return
	}
	if c.confirmed == nil {
		c.confirmed = map[render.Owner]*Confirmed{}
	}
	c.confirmed[owner] = v
}

// ForgetConfirmed forgets what was confirmed of every owner (the cluster was away: anything
// may have happened there).
func (c *Cluster) ForgetConfirmed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirmed = nil
}

// Forget drops everything known of owner's objects.
func (c *Cluster) Forget(owner render.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.confirmed, owner)
	delete(c.touched, owner)
}

// touchLocked marks an object of owner for another look by the next delivery.
func (c *Cluster) touchLocked(owner render.Owner, key string) {
	if c.touched == nil {
		c.touched = map[render.Owner]map[string]bool{}
	}
	if c.touched[owner] == nil {
		c.touched[owner] = map[string]bool{}
	}
	c.touched[owner][key] = true
}
