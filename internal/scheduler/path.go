package scheduler

// path is how Divide arrives at a division.
type path int

const (
	// pathFresh divides from nothing; Previous only breaks ties. Taken for a Rebalance, when
	// nothing is known, and when a decisive input (the key) changed.
	pathFresh path = iota
	// pathAdopt takes a keyless Previous (made by an older Flotilla, or read back from what
	// runs) as it is when it is valid for the inputs: when a fresh division, whose ties go to
	// the seats Previous holds, returns exactly it. Anything else is divided afresh, sticky to
	// where replicas run. It therefore computes as pathFresh does.
	pathAdopt
	// pathIncremental keeps the previous seats and adds or removes the difference to a new
	// total, one seat at a time by the same order as a fresh division; from a fresh Previous
	// it gives exactly the fresh result (one known exception: ModePacked with a candidate
	// whose estimated room is not above its floor, once the fill reaches overfill).
	pathIncremental
	// pathShift moves replicas reported unschedulable to other candidates; nothing else moves.
	pathShift
	// pathUnchanged returns Previous: same decisive inputs, same total, so estimates alone
	// never move replicas.
	pathUnchanged
)

// choosePath picks the path for in, whose decisive inputs hash to key.
func choosePath(in DivideInput, key string) path {
	p := in.Previous
	switch {
	case in.Rebalance || p == nil:
		return pathFresh
	case p.Key == "":
		return pathAdopt
	case p.Key != key:
		return pathFresh
	case previousTotal(p) != int64(max(in.Total, 0)):
		return pathIncremental
	case anyUnschedulable(in.Clusters):
		return pathShift
	default:
		return pathUnchanged
	}
}

// previousTotal is the total a division was made for: what it placed and what it could not.
func previousTotal(d *Division) int64 {
	sum := int64(d.Unplaced)
	for _, n := range d.Replicas {
		sum += int64(n)
	}
	return sum
}

func anyUnschedulable(cs []Candidate) bool {
	for _, c := range cs {
		if c.Unschedulable > 0 {
			return true
		}
	}
	return false
}
