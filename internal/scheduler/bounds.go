package scheduler

import (
	"math"
	"sort"
)

// unlimited stands for a cap nothing sets.
const unlimited int32 = math.MaxInt32

// Seat classes: every candidate's seats are, in order, floor seats, seats within its estimated
// room, and overfill seats up to its hard cap. A class is served across all candidates before
// the next.
const (
	classFloor = iota
	classRoom
	classOverfill
)

// bounds is a candidate resolved for one division. Seat k (1-based) of a candidate is in
// classFloor for k ≤ floor, classRoom for k ≤ soft, classOverfill for k ≤ hard.
type bounds struct {
	name string
	tier int
	// floor ≤ soft ≤ hard.
	floor, soft, hard int32
	// minimum is the floor asked for (before a cordon caps it): what the message reports.
	minimum int32
	// room is the estimated room before it was clamped between floor and hard (unlimited if
	// unknown): what Overfill is measured against.
	room int32
	// weight is the Webster weight, at least 1; standby candidates (weight 0) take seats only
	// after the others of their class.
	weight  uint64
	standby bool
	// cordoned: its hard cap is its previous share.
	cordoned bool
	// held is the candidate's previous share; unschedulable its reported unschedulable replicas.
	held, unschedulable int32
	// hash breaks ties without name bias; rank is the candidate's position in Packed order.
	hash uint64
	rank int
	// labels are the candidate's labels; spreads says it counts toward spread domains;
	// unlabelled is the DoNotSchedule topology key it lacks, for which it takes nothing.
	labels     map[string]string
	spreads    bool
	unlabelled string
}

// boundsOf resolves every candidate of in, sorted by name so that the input order never matters.
func boundsOf(in DivideInput) []*bounds {
	cs := append([]Candidate(nil), in.Clusters...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	fallback := capacityFallback(cs)
	bs := make([]*bounds, 0, len(cs))
	for _, c := range cs {
		held := int32(0)
		if in.Previous != nil {
			held = max(in.Previous.Replicas[c.Name], 0)
		}
		b := &bounds{name: c.Name, tier: c.Tier, held: held, unschedulable: max(c.Unschedulable, 0),
			hash: tieHash(in.Seed, c.Name)}
		b.setCaps(c, in.Previous != nil)
		b.setSpread(c, in.Spread)
		b.setWeight(c, in.Mode, fallback)
		bs = append(bs, b)
	}
	rankForPacking(bs)
	return bs
}

// setCaps resolves floor, soft and hard: FailedOver and Returning candidates get nothing; a
// Cordoned one never grows beyond its previous share; the soft cap is the estimated room,
// lowered below the previous share by an unschedulable report.
func (b *bounds) setCaps(c Candidate, hasPrevious bool) {
	if c.State == StateFailedOver || c.State == StateReturning {
		b.room = 0
		return
	}
	b.hard = min(orUnlimited(c.Max), orUnlimited(c.LimitFit))
	b.minimum = min(max(c.Min, 0), b.hard)
	if c.State == StateCordoned {
		b.cordoned = true
		b.hard = min(b.hard, b.held)
	}
	b.floor = min(max(c.Min, 0), b.hard)
	b.room = min(b.hard, orUnlimited(c.Estimate))
	if b.unschedulable > 0 && hasPrevious {
		b.room = min(b.room, max(b.held-b.unschedulable, 0))
	}
	b.soft = min(max(b.room, b.floor), b.hard)
}

// setSpread records what spread needs of the candidate: its labels, whether it takes part in
// domains, and, lacking a DoNotSchedule topology key, no seats at all.
func (b *bounds) setSpread(c Candidate, spread []SpreadConstraint) {
	if len(spread) == 0 {
		return
	}
	b.labels, b.spreads = c.Labels, takesPart(c)
	if key := lackedStrictKey(c, spread); key != "" && b.spreads {
		b.spreads, b.unlabelled = false, key
		b.floor, b.soft, b.hard, b.minimum, b.room = 0, 0, 0, 0, 0
	}
}

// setWeight resolves the Webster weight: Weight for ModeWeighted, the estimate for
// ModeCapacity (an unknown one counts as fallback), none for ModePacked (which fills in order).
func (b *bounds) setWeight(c Candidate, mode ReplicaMode, fallback int32) {
	w := c.Weight
	switch mode {
	case ModeCapacity:
		w = c.Estimate
		if w < 0 {
			w = fallback
		}
	case ModePacked:
		w = 1
	}
	b.standby = w <= 0
	b.weight = uint64(max(w, 1))
}

// capacityFallback is the weight ModeCapacity gives a candidate whose estimate is unknown: the
// mean of the known estimates (1 if none is known), so a new cluster is neither starved nor
// flooded.
func capacityFallback(cs []Candidate) int32 {
	var sum, n int64
	for _, c := range cs {
		if c.Estimate >= 0 {
			sum += int64(c.Estimate)
			n++
		}
	}
	if n == 0 || sum == 0 {
		return 1
	}
	return int32(max((sum+n-1)/n, 1))
}

// rankForPacking orders candidates for ModePacked: those holding replicas beyond their floor
// first, the furthest filled first (overfill seats before room seats, a full class before a
// partly filled one), so that a division packed before is packed the same way again; then the
// most estimated room; then the hash.
func rankForPacking(bs []*bounds) {
	order := append([]*bounds(nil), bs...)
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if la, lb := a.packedLevel(), b.packedLevel(); la != lb {
			return la > lb
		}
		if a.soft != b.soft {
			return a.soft > b.soft
		}
		return hashBefore(a, b)
	})
	for i, b := range order {
		b.rank = i
	}
}

// packedLevel is how far a Packed fill had gone on the candidate: 0 if it holds no more than
// its floor, else twice the class of its last seat held, plus one if that class is full.
func (b *bounds) packedLevel() int {
	held := min(b.held, b.hard)
	if held <= b.floor {
		return 0
	}
	class := b.classOf(held)
	level := 2 * class
	if _, hi := b.classSeats(class); held == hi {
		level++
	}
	return level
}

// classOf is the class of seat k (1-based).
func (b *bounds) classOf(k int32) int {
	switch {
	case k <= b.floor:
		return classFloor
	case k <= b.soft:
		return classRoom
	default:
		return classOverfill
	}
}

// classSeats returns the seats of a class as the range (lo, hi].
func (b *bounds) classSeats(class int) (lo, hi int32) {
	switch class {
	case classFloor:
		return 0, b.floor
	case classRoom:
		return b.floor, b.soft
	default:
		return b.soft, b.hard
	}
}

func orUnlimited(n int32) int32 {
	if n < 0 {
		return unlimited
	}
	return n
}
