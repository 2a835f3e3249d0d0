package scheduler

import (
	"fmt"
	"strings"
)

// report builds the Division of seats: replicas, overfill, unplaced, reason and message.
// Unplaced replicas are for the spread (reason SpreadUnsatisfiable) when a candidate is below
// its hard cap (a cordoned one never counts: its cap is what it held, so a division computed
// again from this one must say the same), or a DoNotSchedule spread gave a cluster without its
// label nothing; too few domains are reported the same way.
func report(key string, total int32, bs []*bounds, seats []int32, sp spreadReport) Division {
	d := Division{Key: key, Replicas: make(map[string]int32, len(bs)), Reason: ReasonPlaced}
	var overfilled, shares []string
	var overfill, floors int64
	belowCap := false
	for i, b := range bs {
		belowCap = belowCap || (seats[i] < b.hard && !b.cordoned)
		d.Replicas[b.name] = seats[i]
		if seats[i] > 0 {
			shares = append(shares, fmt.Sprintf("%s=%d", b.name, seats[i]))
		}
		floors += int64(b.minimum)
		if extra := seats[i] - b.room; extra > 0 {
			if d.Overfill == nil {
				d.Overfill = map[string]int32{}
			}
			d.Overfill[b.name] = extra
			overfill += int64(extra)
			overfilled = append(overfilled, fmt.Sprintf("%s=%d (room %d)", b.name, seats[i], b.room))
		}
	}
	placed := sum(seats)
	d.Unplaced = int32(int64(max(total, 0)) - placed)
	var notes []string
	switch {
	case d.Unplaced > 0 && (belowCap || sp.anyUnlabelled):
		d.Reason = ReasonSpreadUnsatisfiable
		notes = append(notes, fmt.Sprintf("%d of %d replicas unplaced: the spread admits %d", d.Unplaced, total, placed))
	case d.Unplaced > 0:
		d.Reason = ReasonLimitsExceeded
		notes = append(notes, fmt.Sprintf("%d of %d replicas unplaced: max and placement limits admit %d", d.Unplaced, total, placed))
	}
	if overfill > 0 {
		if d.Reason == ReasonPlaced {
			d.Reason = ReasonInsufficientCapacity
		}
		notes = append(notes, fmt.Sprintf("%d replicas above estimated room, expect Pending pods: %s", overfill, summarize(overfilled)))
	}
	if sp.unsatisfied && (d.Reason == ReasonPlaced || d.Reason == ReasonInsufficientCapacity) {
		d.Reason = ReasonSpreadUnsatisfiable
	}
	if len(sp.notes) > 0 {
		notes = append(notes, sp.message())
	}
	if floors > int64(max(total, 0)) {
		notes = append(notes, fmt.Sprintf("minimums sum to %d, more than the total %d: served by weight", floors, total))
	}
	d.Message = fmt.Sprintf("%d replicas on %d of %d clusters", placed, len(shares), len(bs))
	if len(shares) > 0 {
		d.Message += ": " + summarize(shares)
	}
	if len(notes) > 0 {
		d.Message += "; " + strings.Join(notes, "; ")
	}
	return d
}
