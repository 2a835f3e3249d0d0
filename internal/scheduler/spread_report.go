package scheduler

import (
	"fmt"
	"sort"
	"strings"
)

// spreadReport collects what spread constraints did, for a Division's reason and message.
type spreadReport struct {
	notes []string
	// unsatisfied: some level had fewer domains than its minDomains.
	unsatisfied bool
	// anyUnlabelled: DoNotSchedule gave a candidate lacking its key nothing.
	anyUnlabelled bool
}

// observe notes, for one level whose domains ds took dseats of want replicas: too few
// domains; under DoNotSchedule, what each domain holds when some of want is not placed; under
// ScheduleAnyway, a skew above maxSkew and how many replicas went to other domains for it.
func (sp *spreadReport) observe(l spreadLevel, ds []*domain, dseats []int32, want int64) {
	c := l.constraints[0]
	where := "spread over " + c.TopologyKey
	if l.within != "" {
		where += " in " + l.within
	}
	if len(ds) < c.minDomains() {
		sp.unsatisfied = true
		note := fmt.Sprintf("%s: %d domains, minDomains %d", where, len(ds), c.minDomains())
		if c.strict() {
			note += fmt.Sprintf(": each holds at most maxSkew %d", c.maxSkew())
		}
		sp.notes = append(sp.notes, note)
	}
	if placed := sum(dseats); c.strict() && placed < want {
		sp.notes = append(sp.notes, fmt.Sprintf("%s (DoNotSchedule, maxSkew %d): %s hold %d of %d",
			where, c.maxSkew(), summarize(domainSeats(ds, dseats)), placed, want))
		return
	}
	if moved, short := movedByCaps(ds, dseats); !c.strict() && moved > 0 && skew(dseats) > c.maxSkew() {
		sp.notes = append(sp.notes, fmt.Sprintf("%s: %s hold less than an even part (room or caps of their clusters), skew %d above maxSkew %d: %d replicas placed in other domains (ScheduleAnyway)",
			where, summarize(short), skew(dseats), c.maxSkew(), moved))
	}
}

// movedByCaps compares the domains' seats with an even split of the same replicas that no cap
// limits, ties to the hash alone: how many replicas the short domains miss, and those domains
// as "label=seats of even". (Only inputs and the result enter it, so a division computed again
// from its own result says the same.)
func movedByCaps(ds []*domain, dseats []int32) (int64, []string) {
	even := make([]*bounds, len(ds))
	for i, d := range ds {
		even[i] = &bounds{name: d.label, weight: 1, hash: d.b.hash, floor: d.b.minimum, soft: unlimited, hard: unlimited}
	}
	evenSeats := make([]int32, len(ds))
	adjustSeats(even, evenSeats, sum(dseats), false)
	var moved int64
	var short []string
	for i, d := range ds {
		if miss := evenSeats[i] - dseats[i]; miss > 0 {
			moved += int64(miss)
			short = append(short, fmt.Sprintf("%s=%d of %d", d.label, dseats[i], evenSeats[i]))
		}
	}
	return moved, short
}

// domainSeats lists the domains with their seats: "region=eu=2".
func domainSeats(ds []*domain, dseats []int32) []string {
	items := make([]string, len(ds))
	for i, d := range ds {
		items[i] = fmt.Sprintf("%s=%d", d.label, dseats[i])
	}
	return items
}

// skew is the largest difference between two domains' seats.
func skew(dseats []int32) int64 {
	if len(dseats) == 0 {
		return 0
	}
	lo, hi := dseats[0], dseats[0]
	for _, n := range dseats {
		lo, hi = min(lo, n), max(hi, n)
	}
	return int64(hi - lo)
}

// unlabelled notes the candidates DoNotSchedule gave nothing because they lack its key.
func (sp *spreadReport) unlabelled(bs []*bounds) {
	byKey := map[string][]string{}
	var keys []string
	for _, b := range bs {
		if b.unlabelled == "" {
			continue
		}
		if byKey[b.unlabelled] == nil {
			keys = append(keys, b.unlabelled)
		}
		byKey[b.unlabelled] = append(byKey[b.unlabelled], b.name)
		sp.anyUnlabelled = true
	}
	sort.Strings(keys)
	for _, k := range keys {
		sp.notes = append(sp.notes, fmt.Sprintf("%s lack label %s: no replicas (spread DoNotSchedule)", summarize(byKey[k]), k))
	}
}

func (sp *spreadReport) message() string { return strings.Join(sp.notes, "; ") }
