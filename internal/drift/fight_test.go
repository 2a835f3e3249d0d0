package drift

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for streak, want := range map[int]time.Duration{0: 0, 1: 0, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second,
		9: 256 * time.Second, 10: MaxBackoff, 1000: MaxBackoff} {
		if got := Backoff(streak); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", streak, got, want)
		}
	}
}

func TestCorrections(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// c: corrected, u: found drifted again, each at a second.
	type step struct {
		op string
		at float64
	}
	fight := []step{{"c", 0}, {"u", 0.1}, {"c", 0.2}, {"u", 0.3}, {"c", 2.3}, {"u", 2.4}}
	tests := []struct {
		name         string
		steps        []step
		now          float64
		wantWait     time.Duration
		wantFighting bool
		wantSettled  bool
		wantStreak   int
		wantStarted  int // the step whose undo started the fight; -1 for none
	}{
		{name: "nothing known", now: 0, wantStarted: -1},
		{name: "a correction that holds for the window settles", steps: []step{{"c", 0}}, now: 60, wantSettled: true, wantStarted: -1},
		{name: "a correction holding for less is not settled yet", steps: []step{{"c", 0}}, now: 59, wantStarted: -1},
		{name: "a drift with no correction before it counts for nothing", steps: []step{{"u", 0}}, now: 0, wantStarted: -1},
		{name: "the first undone correction is corrected again at once", steps: []step{{"c", 0}, {"u", 0.1}}, now: 0.1,
			wantStreak: 1, wantStarted: -1},
		{name: "only the first drift after a correction counts", steps: []step{{"c", 0}, {"u", 0.1}, {"u", 0.2}, {"u", 0.3}}, now: 0.3,
			wantStreak: 1, wantStarted: -1},
		{name: "two undone in a row wait FirstBackoff from the undo", steps: []step{{"c", 0}, {"u", 0.1}, {"c", 0.2}, {"u", 0.3}}, now: 0.3,
			wantWait: 2 * time.Second, wantStreak: 2, wantStarted: -1},
		{name: "the wait runs out", steps: []step{{"c", 0}, {"u", 0.1}, {"c", 0.2}, {"u", 0.3}}, now: 2.3,
			wantStreak: 2, wantStarted: -1},
		{name: "the third undone in a row starts a fight", steps: fight, now: 2.4,
			wantWait: 4 * time.Second, wantFighting: true, wantStreak: 3, wantStarted: 5},
		{name: "a fight lasts while its correction waits, beyond the window", steps: fight, now: 100,
			wantFighting: true, wantStreak: 3, wantStarted: 5},
		{name: "a fight lasts after a correction until it has held for the window", steps: append(fight, step{"c", 6.4}), now: 66,
			wantFighting: true, wantStreak: 3, wantStarted: 5},
		{name: "a fight ends when a correction holds for the window", steps: append(fight, step{"c", 6.4}), now: 66.4,
			wantSettled: true, wantStreak: 3, wantStarted: 5},
		{name: "an undo later than the window is a drift of its own", steps: []step{{"c", 0}, {"u", 0.1}, {"c", 0.2}, {"u", 61}}, now: 61,
			wantStarted: -1},
		{name: "a drift after a settled fight starts afresh", steps: append(fight, step{"c", 6.4}, step{"u", 70}), now: 70,
			wantStarted: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Corrections
			started := -1
			for i, s := range tc.steps {
				switch s.op {
				case "c":
					c.Corrected(at(s.at))
				case "u":
					if c.Undone(at(s.at)) {
						started = i
					}
				}
			}
			now := at(tc.now)
			if got := c.Wait(now); got != tc.wantWait {
				t.Errorf("Wait = %s, want %s", got, tc.wantWait)
			}
			if got := c.Fighting(now); got != tc.wantFighting {
				t.Errorf("Fighting = %v, want %v", got, tc.wantFighting)
			}
			if got := c.Settled(now); got != tc.wantSettled {
				t.Errorf("Settled = %v, want %v", got, tc.wantSettled)
			}
			if got := c.Streak(); got != tc.wantStreak {
				t.Errorf("Streak = %d, want %d", got, tc.wantStreak)
			}
			if started != tc.wantStarted {
				t.Errorf("fight started at step %d, want %d", started, tc.wantStarted)
			}
		})
	}
}

// TestCorrectionsAgainstAFighter plays a fighter that undoes every correction 50 ms after it,
// against corrections made as soon as Wait allows, and counts the corrections: the figures
// the documentation and the integration test rely on.
func TestCorrectionsAgainstAFighter(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var c Corrections
	var corrections []time.Duration
	fightAt := time.Duration(-1)
	now := t0
	for now.Sub(t0) < time.Hour {
		c.Corrected(now)
		corrections = append(corrections, now.Sub(t0))
		now = now.Add(50 * time.Millisecond)
		if c.Undone(now) {
			fightAt = now.Sub(t0)
		}
		now = now.Add(c.Wait(now))
	}
	in := func(d time.Duration) int {
		n := 0
		for _, at := range corrections {
			if at < d {
				n++
			}
		}
		return n
	}
	if fightAt < 0 || fightAt > 3*time.Second {
		t.Errorf("fight found after %s, want within 3s", fightAt)
	}
	if n := in(20 * time.Second); n > 5 {
		t.Errorf("%d corrections in the first 20s, want at most 5", n)
	}
	if n := in(time.Minute); n > 7 {
		t.Errorf("%d corrections in the first minute, want at most 7", n)
	}
	// Then one per MaxBackoff.
	if n := in(time.Hour) - in(30*time.Minute); n > int(30*time.Minute/MaxBackoff)+1 {
		t.Errorf("%d corrections in the second half hour, want at most %d", n, int(30*time.Minute/MaxBackoff)+1)
	}
	t.Logf("fight found after %s; corrections in 20s: %d, 1m: %d, 1h: %d", fightAt, in(20*time.Second), in(time.Minute), in(time.Hour))
}
