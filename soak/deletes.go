package main

import (
	"fmt"
	"time"
)

// staleness is how long after the hub wants an object again a delete of it from an earlier
// moment when it was not wanted still counts as rightful: the time for Flotilla's view of the
// hub to catch up on a busy machine, with the hub controller possibly just restarted or a
// spoke frozen. A delete later than that, or of an object the hub never stopped wanting, is
// wrongful.
const staleness = 30 * time.Second

// spokeDelete is one delete request Flotilla sent to a spoke, from its audit log.
type spokeDelete struct {
	Cluster string
	Object  objKey
	At      time.Time // when the spoke received it
	Code    int
}

// wrongfulDelete is a delete the rule does not justify, with why.
type wrongfulDelete struct {
	spokeDelete
	Why string
}

func (w wrongfulDelete) String() string {
	return fmt.Sprintf("%s: delete of %s at %s (HTTP %d): %s", w.Cluster, w.Object, w.At.Format(time.RFC3339Nano), w.Code, w.Why)
}

// wrongfulDeletes applies the soak's rule to Flotilla's deletes of the soak's objects on the
// spokes: a delete received at t of object o is rightful only if the hub stopped wanting o
// (h.unwanted) at some instant s ≤ t and did not want it again before t − staleness. So an
// object the hub never stopped wanting may never be deleted, and an object the hub wants
// again may be deleted only by a request that was on its way within staleness of the change.
// Deletes of objects the soak never put on the hub are wrongful too (Flotilla's own objects
// are not in its namespace). The soak's Placements choose every spoke and its Deployments
// keep at least one replica per spoke, so what the hub wants is the same for every cluster.
func wrongfulDeletes(deletes []spokeDelete, h *wantHistory) []wrongfulDelete {
	var out []wrongfulDelete
	for _, d := range deletes {
		if !h.everWanted[d.Object] {
			out = append(out, wrongfulDelete{d, "the soak never put this object on the hub"})
			continue
		}
		if !rightful(h.unwanted[d.Object], d.At) {
			why := "the hub wanted it throughout"
			if iv := h.unwanted[d.Object]; len(iv) > 0 {
				why = fmt.Sprintf("the hub wanted it from %s (last unwanted before: %s)", lastWantedSince(iv, d.At), describe(iv))
			}
			out = append(out, wrongfulDelete{d, why})
		}
	}
	return out
}

// rightful reports whether t falls in an unwanted interval stretched by staleness at its end.
func rightful(unwanted []interval, t time.Time) bool {
	for _, iv := range unwanted {
		if iv.Start.After(t) {
			continue
		}
		if iv.End.IsZero() || !iv.End.Add(staleness).Before(t) {
			return true
		}
	}
	return false
}

// lastWantedSince is when the hub last started wanting the object before t.
func lastWantedSince(unwanted []interval, t time.Time) string {
	since := "the start"
	for _, iv := range unwanted {
		if !iv.End.IsZero() && iv.End.Before(t) {
			since = iv.End.Format(time.RFC3339Nano)
		}
	}
	return since
}

func describe(unwanted []interval) string {
	s := ""
	for i, iv := range unwanted {
		if i > 0 {
			s += ", "
		}
		end := "now"
		if !iv.End.IsZero() {
			end = iv.End.Format("15:04:05.000")
		}
		s += iv.Start.Format("15:04:05.000") + "–" + end
	}
	return s
}
