package scheduler

// Every seat of every candidate has a place in one total order, the order a fresh division
// hands seats out in: by group (class, then weighted before standby, then tier), then by
// Webster priority weight/(2k−1) (ModePacked: by rank, floors excepted), then seats held in Previous first, then
// the tie hash. A candidate's own seats come in the order 1, 2, 3, ... A division of n replicas
// is the first n seats of that order, which is why raising the total never lowers a share.

// group is the part of the seat order a seat belongs to; groups are served in order.
type group struct {
	class   int
	standby bool
	tier    int
}

func (g group) before(h group) bool {
	if g.class != h.class {
		return g.class < h.class
	}
	if g.standby != h.standby {
		return !g.standby
	}
	return g.tier < h.tier
}

func groupOf(b *bounds, seat int32) group {
	return group{class: b.classOf(seat), standby: b.standby, tier: b.tier}
}

// adjustSeats adds or removes seats until they sum to target (at most the sum of hard caps):
// it adds the first seats of the order that nobody holds, and removes the last seats held.
func adjustSeats(bs []*bounds, seats []int32, target int64, packed bool) {
	for n := sum(seats); n < target && addInFirstGroup(bs, seats, target-n, packed); n = sum(seats) {
	}
	for n := sum(seats); n > target && removeFromLastGroup(bs, seats, n-target, packed); n = sum(seats) {
	}
}

// addInFirstGroup adds up to need seats in the first group where a candidate has a next seat;
// false if no candidate has one.
func addInFirstGroup(bs []*bounds, seats []int32, need int64, packed bool) bool {
	var first *group
	for i, b := range bs {
		if seats[i] < b.hard {
			if g := groupOf(b, seats[i]+1); first == nil || g.before(*first) {
				first = &g
			}
		}
	}
	if first == nil {
		return false
	}
	var members []*member
	var room int64
	for i, b := range bs {
		if seats[i] < b.hard && groupOf(b, seats[i]+1) == *first {
			_, hi := b.classSeats(first.class)
			members = append(members, &member{b: b, seats: &seats[i], hi: hi})
			room += int64(hi - seats[i])
		}
	}
	if room <= need {
		for _, m := range members {
			*m.seats = m.hi
		}
		return true
	}
	fillGroup(members, need, packed && first.class != classFloor)
	return true
}

// removeFromLastGroup removes up to excess seats in the last group where a candidate holds a
// seat; false if none holds one. Removing the last seats held in a group is keeping its first
// ones: it refills the group from its start, each candidate capped at what it holds.
func removeFromLastGroup(bs []*bounds, seats []int32, excess int64, packed bool) bool {
	var last *group
	for i, b := range bs {
		if seats[i] > 0 {
			if g := groupOf(b, seats[i]); last == nil || last.before(g) {
				last = &g
			}
		}
	}
	if last == nil {
		return false
	}
	var members []*member
	var held int64
	for i, b := range bs {
		if seats[i] > 0 && groupOf(b, seats[i]) == *last {
			lo, _ := b.classSeats(last.class)
			members = append(members, &member{b: b, seats: &seats[i], hi: seats[i]})
			held += int64(seats[i] - lo)
			seats[i] = lo
		}
	}
	fillGroup(members, max(held-excess, 0), packed && last.class != classFloor)
	return true
}

func sum(seats []int32) int64 {
	var n int64
	for _, s := range seats {
		n += int64(s)
	}
	return n
}
