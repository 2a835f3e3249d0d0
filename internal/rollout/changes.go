package rollout

import (
	"cmp"
	"slices"
	"time"
)

// StageChange is a stage of a revision's rollout that started or completed between two
// passes.
type StageChange struct {
	Stage, Revision string
	// Complete: the stage completed (every cluster done, or failed within maxFailures);
	// otherwise it started (its first cluster was let through).
	Complete bool
	// At is when; Took, for a completed stage whose start this memory saw, how long it took
	// from its start (0 when its start is not known: it started before a restart).
	At   time.Time
	Took time.Duration
}

// Changes are the stages that started or completed from one pass's memory (before) to the
// next's (after), in the order they did: what an owner reports as Events and measures. A new
// revision's rollout is compared with nothing (each of its stages that started is new).
func Changes(before, after Memory) []StageChange {
	if after.Revision == "" {
		return nil // undone, or not kept: no stage moves
	}
	if before.Revision != after.Revision {
		before = Memory{}
	}
	var out []StageChange
	for st, at := range after.Started {
		if _, was := before.Started[st]; !was {
			out = append(out, StageChange{Stage: st, Revision: after.Revision, At: at})
		}
	}
	for st, at := range after.Done {
		if _, was := before.Done[st]; was {
			continue
		}
		c := StageChange{Stage: st, Revision: after.Revision, Complete: true, At: at}
		if began, ok := after.Started[st]; ok && !at.Before(began) {
			c.Took = at.Sub(began)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b StageChange) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if a.Complete != b.Complete { // a stage completes, then the next starts
			if a.Complete {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Stage, b.Stage)
	})
	return out
}
