package scheduler

import "sort"

// Unsatisfiable says what a spread constraint does when a domain cannot hold its part.
type Unsatisfiable string

const (
	// ScheduleAnyway places what a domain cannot hold (its clusters' estimated room, then their
	// hard caps) in the other domains, and the message says so. The default.
	ScheduleAnyway Unsatisfiable = "ScheduleAnyway"
	// DoNotSchedule keeps the spread: the domain split ignores estimated room (a short domain
	// is overfilled), and no domain holds more than maxSkew above a domain at its hard cap;
	// the rest is Unplaced.
	DoNotSchedule Unsatisfiable = "DoNotSchedule"
)

// SpreadConstraint balances a division over the domains of one topology key: the distinct
// values of that label among the candidates that take replicas (neither FailedOver nor
// Returning, Max not 0).
type SpreadConstraint struct {
	// TopologyKey is the cluster label whose values are the domains.
	TopologyKey string
	// MaxSkew is how many replicas above a domain at its hard cap DoNotSchedule lets another
	// domain hold; below 1 counts as 1.
	MaxSkew int32
	// MinDomains is how many domains there must be; below 1 counts as 1. With fewer, the
	// division reports ReasonSpreadUnsatisfiable and DoNotSchedule counts the lowest domain as 0.
	MinDomains int32
	// WhenUnsatisfiable is ScheduleAnyway ("" too) or DoNotSchedule.
	WhenUnsatisfiable Unsatisfiable
}

func (c SpreadConstraint) strict() bool   { return c.WhenUnsatisfiable == DoNotSchedule }
func (c SpreadConstraint) maxSkew() int64 { return int64(max(c.MaxSkew, 1)) }
func (c SpreadConstraint) minDomains() int {
	return int(max(c.MinDomains, 1))
}

// takesPart says whether a candidate counts toward spread domains: it can take replicas.
func takesPart(c Candidate) bool {
	return c.State != StateFailedOver && c.State != StateReturning && c.Max != 0
}

// lackedStrictKey is the first DoNotSchedule topology key a candidate's labels lack, or "".
// Such a candidate takes no replicas.
func lackedStrictKey(c Candidate, spread []SpreadConstraint) string {
	for _, sc := range spread {
		if _, ok := c.Labels[sc.TopologyKey]; !ok && sc.strict() {
			return sc.TopologyKey
		}
	}
	return ""
}

// domain is the candidates of a level sharing one value of the level's topology key, as a
// single seat-taker: its bounds sum its members'.
type domain struct {
	// label names it in messages: "key=value", or the cluster's name when it lacks the key.
	label   string
	members []int
	b       *bounds
}

// spreadLevel is a set of candidates and the constraints still to apply to them, outermost
// first. Its seats are the candidates' seats, updated in place.
type spreadLevel struct {
	bs          []*bounds
	seats       []int32
	constraints []SpreadConstraint
	seed        string
	packed      bool
	// within names the enclosing domains, for messages ("" at the top).
	within string
}

// domains groups the level's taking-part candidates by the first constraint's key, sorted by
// label so that the candidates' order never matters. A candidate without the key forms a
// domain of its own (under DoNotSchedule it was given no replicas by boundsOf).
func (l spreadLevel) domains() []*domain {
	key := l.constraints[0].TopologyKey
	byLabel := map[string]*domain{}
	var out []*domain
	for i, b := range l.bs {
		if !b.spreads {
			continue
		}
		label := b.name
		if v, ok := b.labels[key]; ok {
			label = key + "=" + v
		}
		d := byLabel[label]
		if d == nil {
			d = &domain{label: label}
			byLabel[label] = d
			out = append(out, d)
		}
		d.members = append(d.members, i)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].label < out[j].label })
	return out
}

// sub is the level of one domain's members under the remaining constraints (without seats
// when the level has none: capacity needs none).
func (l spreadLevel) sub(d *domain) spreadLevel {
	s := spreadLevel{constraints: l.constraints[1:], seed: l.seed, packed: l.packed, within: d.label}
	for _, i := range d.members {
		s.bs = append(s.bs, l.bs[i])
		if l.seats != nil {
			s.seats = append(s.seats, l.seats[i])
		}
	}
	return s
}

// capacity is how many replicas the level can hold: its hard caps, less what DoNotSchedule
// constraints forbid to keep the skew.
func (l spreadLevel) capacity() int64 {
	if len(l.constraints) == 0 {
		var n int64
		for _, b := range l.bs {
			n += int64(b.hard)
		}
		return n
	}
	var n int64
	for _, d := range l.resolve(l.domains()) {
		n += int64(d.b.hard)
	}
	return n
}

// resolve sets each domain's bounds: floors and soft caps sum its members', the hard cap is
// what the nested constraints let it hold, lowered under DoNotSchedule to maxSkew above the
// lowest domain's hard cap (0 when there are fewer domains than minDomains), never below the
// floors. Domains have equal weight, so Webster fills the one with the fewest seats first.
func (l spreadLevel) resolve(ds []*domain) []*domain {
	c := l.constraints[0]
	raw := make([]int64, len(ds))
	lowest := int64(-1)
	for i, d := range ds {
		raw[i] = l.sub(d).capacity()
		if lowest < 0 || raw[i] < lowest {
			lowest = raw[i]
		}
	}
	if len(ds) < c.minDomains() {
		lowest = 0
	}
	for i, d := range ds {
		b := &bounds{name: d.label, weight: 1, hash: tieHash(l.seed, "spread/"+d.label)}
		var floor, soft, held, minimum int64
		for _, m := range d.members {
			mb := l.bs[m]
			minimum += int64(mb.minimum)
			floor += int64(mb.floor)
			soft += int64(mb.soft)
			held += int64(mb.held)
		}
		b.held = int32(min(held, int64(unlimited)))
		hard := raw[i]
		if c.strict() {
			hard = max(min(hard, lowest+c.maxSkew()), floor)
			soft = hard
		}
		b.hard = int32(min(hard, int64(unlimited)))
		b.floor = int32(min(floor, int64(b.hard)))
		b.soft = int32(min(max(soft, int64(b.floor)), int64(b.hard)))
		b.minimum, b.room = int32(min(minimum, int64(unlimited))), b.soft
		d.b = b
	}
	return ds
}

// fillSpread sets the level's seats to hold want replicas, or as many as it can: the domains
// of the first constraint take seats by the seat order (floors, then room, then overfill;
// fewest seats first; then a domain's previous share; then a hash of its label), starting from
// the seats they hold; then each domain's part is filled among its members the same way under
// the remaining constraints, and with none left by the division's own fill.
func fillSpread(l spreadLevel, want int64, sp *spreadReport) {
	if len(l.constraints) == 0 {
		adjustSeats(l.bs, l.seats, min(want, l.capacity()), l.packed)
		return
	}
	ds := l.resolve(l.domains())
	dbs := make([]*bounds, len(ds))
	dseats := make([]int32, len(ds))
	var room int64
	for i, d := range ds {
		dbs[i] = d.b
		for _, m := range d.members {
			dseats[i] += l.seats[m]
		}
		dseats[i] = min(dseats[i], d.b.hard)
		room += int64(d.b.hard)
	}
	adjustSeats(dbs, dseats, min(want, room), false)
	sp.observe(l, ds, dseats, want)
	for i, d := range ds {
		s := l.sub(d)
		fillSpread(s, int64(dseats[i]), sp)
		for j, m := range d.members {
			l.seats[m] = s.seats[j]
		}
	}
}
