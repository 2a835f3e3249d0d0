package drift

import "time"

// The rules of drift correction when someone on the cluster keeps changing an object back: a
// controller, or an admission webhook the object's later writers go through, that rewrites a
// field Flotilla sets. Without them every correction is undone at once and corrected again,
// as fast as the cluster answers.
const (
	// FightWindow is how soon after a correction a new drift counts as undoing it. A
	// correction that holds for FightWindow ends the history: the next drift of the object
	// is corrected at once again.
	FightWindow = time.Minute
	// FightThreshold is how many corrections in a row, each undone within FightWindow, make
	// a fight. A fight is reported (the Fighting condition, one Event) until a correction
	// holds for FightWindow or the desired object changes.
	FightThreshold = 3
	// FirstBackoff is how long Flotilla waits before correcting an object whose last two
	// corrections were undone; each further undone correction doubles the wait. The first
	// undone correction is corrected again at once: people do edit twice.
	FirstBackoff = 2 * time.Second
	// MaxBackoff caps the wait: while a fight lasts, the object is corrected at most once per
	// MaxBackoff, unless the desired object changes (which starts the history afresh).
	MaxBackoff = 5 * time.Minute
)

// Corrections is the correction history of one object on one cluster, for one desired
// object: the caller starts a new one when the desired object changes. It is a value with
// no clock of its own; every method takes the time.
type Corrections struct {
	streak    int       // corrections in a row undone within FightWindow
	corrected time.Time // the last correction
	undone    time.Time // when the last correction was found undone; zero while it holds
}

// Corrected records a correction made at now.
func (c *Corrections) Corrected(now time.Time) {
	c.corrected, c.undone = now, time.Time{}
}

// Undone records that the object was found drifted again at now. Only the first drift after
// a correction counts, and only within FightWindow of it; it reports whether this drift
// makes the history a fight.
func (c *Corrections) Undone(now time.Time) (fightStarted bool) {
	if c.corrected.IsZero() || !c.undone.IsZero() {
		return false
	}
	c.undone = now
	if now.Sub(c.corrected) > FightWindow {
		c.streak = 0 // the correction held: this is a drift of its own
		return false
	}
	c.streak++
	return c.streak == FightThreshold
}

// Backoff is the wait before correcting an object whose last streak corrections were each
// undone within FightWindow: nothing for none or one, then FirstBackoff, doubling up to
// MaxBackoff.
func Backoff(streak int) time.Duration {
	if streak < 2 {
		return 0
	}
	d := FirstBackoff
	for i := 2; i < streak && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Wait is how long the next correction has to wait from now: nothing unless the last
// correction was undone, and then Backoff of the streak, counted from when it was undone.
func (c *Corrections) Wait(now time.Time) time.Duration {
	if c.undone.IsZero() {
		return 0
	}
	return max(c.undone.Add(Backoff(c.streak)).Sub(now), 0)
}

// Fighting reports whether the object is in a fight at now: FightThreshold corrections in a
// row were undone, and the last correction has not held for FightWindow since.
func (c *Corrections) Fighting(now time.Time) bool {
	return c.streak >= FightThreshold && !c.Settled(now)
}

// Settled reports whether the last correction has held for FightWindow: the history says
// nothing any more and can be forgotten.
func (c *Corrections) Settled(now time.Time) bool {
	return !c.corrected.IsZero() && c.undone.IsZero() && now.Sub(c.corrected) >= FightWindow
}

// SettlesAt is when the last correction will have held for FightWindow, if it holds: when a
// fight report may end. It is zero while the last correction is undone.
func (c *Corrections) SettlesAt() time.Time {
	if c.corrected.IsZero() || !c.undone.IsZero() {
		return time.Time{}
	}
	return c.corrected.Add(FightWindow)
}

// Streak is the number of corrections in a row undone within FightWindow.
func (c *Corrections) Streak() int { return c.streak }
