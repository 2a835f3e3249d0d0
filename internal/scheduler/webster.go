package scheduler

import (
	"container/heap"
	"math"
	"sort"
)

// member is a candidate taking seats in one group: its seats so far and the last seat of the
// group it may take.
type member struct {
	b     *bounds
	seats *int32
	hi    int32
}

// fillGroup hands need seats (fewer than the members' room) to the members of one group:
// packed fills them one after another in rank order (ModePacked beyond floors); otherwise by
// Webster's method.
func fillGroup(members []*member, need int64, packed bool) {
	if packed {
		fillPacked(members, need)
		return
	}
	need -= jumpStart(members, need)
	fillWebster(members, need)
}

// fillPacked fills members to their last seat in rank order until need seats are handed out.
func fillPacked(members []*member, need int64) {
	sort.Slice(members, func(i, j int) bool { return members[i].b.rank < members[j].b.rank })
	for _, m := range members {
		take := min(int64(m.hi-*m.seats), need)
		*m.seats += int32(take)
		need -= take
	}
}

// fillWebster hands out need seats one at a time, each to the member whose next seat comes
// first (nextBefore).
func fillWebster(members []*member, need int64) {
	q := seatQueue{}
	for _, m := range members {
		if *m.seats < m.hi {
			q = append(q, m)
		}
	}
	heap.Init(&q)
	for ; need > 0 && len(q) > 0; need-- {
		m := q[0]
		*m.seats++
		if *m.seats < m.hi {
			heap.Fix(&q, 0)
		} else {
			heap.Pop(&q)
		}
	}
}

// nextBefore says whether a's next seat comes before b's: higher Webster priority
// weight/(2·seats+1) first, then a seat held in Previous, then the tie hash.
func nextBefore(a *bounds, sa int32, b *bounds, sb int32) bool {
	if c := comparePriority(a.weight, 2*uint64(sa)+1, b.weight, 2*uint64(sb)+1); c != 0 {
		return c > 0
	}
	if ha, hb := sa < a.held, sb < b.held; ha != hb {
		return ha
	}
	return hashBefore(a, b)
}

// comparePriority compares wa/da with wb/db exactly: weights are below 2³¹ and divisors below
// 2³³, so the cross products fit in 64 bits.
func comparePriority(wa, da, wb, db uint64) int {
	x, y := wa*db, wb*da
	switch {
	case x > y:
		return 1
	case x < y:
		return -1
	}
	return 0
}

// hashBefore orders candidates by their tie hash; names decide only if two hashes collide.
func hashBefore(a, b *bounds) bool {
	if a.hash != b.hash {
		return a.hash < b.hash
	}
	return a.name < b.name
}

// seatQueue is a heap of members, the one whose next seat comes first on top.
type seatQueue []*member

func (q seatQueue) Len() int { return len(q) }
func (q seatQueue) Less(i, j int) bool {
	return nextBefore(q[i].b, *q[i].seats, q[j].b, *q[j].seats)
}
func (q seatQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *seatQueue) Push(x any)   { *q = append(*q, x.(*member)) }
func (q *seatQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}

// jumpStart hands out at once, for a large need, every seat whose priority is above a
// threshold found by bisection, so that a division of millions of replicas does not take
// millions of steps; the seat-by-seat fill does the rest. Seats above a threshold are always
// the first ones of the order, so the result is the same. The threshold is found in floating
// point, so the seats are checked exactly before they are taken. It returns the seats taken.
func jumpStart(members []*member, need int64) int64 {
	if need <= 4*int64(len(members)) {
		return 0
	}
	lo, hi := math.SmallestNonzeroFloat64, 0.0
	for _, m := range members {
		hi = max(hi, float64(m.b.weight)/float64(2*int64(*m.seats)+1))
	}
	for range 200 {
		mid := math.Sqrt(lo) * math.Sqrt(hi)
		if seatsAbove(members, mid) <= need {
			hi = mid
		} else {
			lo = mid
		}
	}
	take := make([]int32, len(members))
	var taken int64
	for i, m := range members {
		take[i] = seatsAboveFor(m, hi)
		taken += int64(take[i] - *m.seats)
	}
	if taken > need || !separated(members, take) {
		return 0
	}
	for i, m := range members {
		*m.seats = take[i]
	}
	return taken
}

// seatsAbove counts the seats the members would hold beyond their current ones if every seat
// with priority above threshold were taken.
func seatsAbove(members []*member, threshold float64) int64 {
	var n int64
	for _, m := range members {
		n += int64(seatsAboveFor(m, threshold) - *m.seats)
	}
	return n
}

// seatsAboveFor is the member's seats if it took each seat k with weight/(2k−1) > threshold,
// between its current seats and its last seat of the group.
func seatsAboveFor(m *member, threshold float64) int32 {
	k := math.Ceil((float64(m.b.weight)/threshold+1)/2) - 1
	return int32(min(max(k, float64(*m.seats)), float64(m.hi)))
}

// separated checks exactly that every seat take adds comes before every seat left out: the
// lowest priority among the last seats taken beats the highest among the next seats left.
func separated(members []*member, take []int32) bool {
	var worstTaken, bestLeft *bounds
	var worstSeat, bestSeat int32
	for i, m := range members {
		b := m.b
		if take[i] > *m.seats && (worstTaken == nil || comparePriority(b.weight, 2*uint64(take[i])-1, worstTaken.weight, 2*uint64(worstSeat)-1) < 0) {
			worstTaken, worstSeat = b, take[i]
		}
		if take[i] < m.hi && (bestLeft == nil || comparePriority(b.weight, 2*uint64(take[i])+1, bestLeft.weight, 2*uint64(bestSeat)+1) > 0) {
			bestLeft, bestSeat = b, take[i]
		}
	}
	if worstTaken == nil || bestLeft == nil {
		return true
	}
	return comparePriority(worstTaken.weight, 2*uint64(worstSeat)-1, bestLeft.weight, 2*uint64(bestSeat)+1) > 0
}
