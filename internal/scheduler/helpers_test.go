package scheduler

// cand is an Active candidate of weight w with no bounds and an unknown estimate.
func cand(name string, w int32) Candidate {
	return Candidate{Name: name, Weight: w, Max: Unbounded, LimitFit: Unbounded, Estimate: Unbounded}
}

// with returns c changed by f.
func with(c Candidate, f func(*Candidate)) Candidate {
	f(&c)
	return c
}

func shares(kv ...any) map[string]int32 {
	m := map[string]int32{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = int32(kv[i+1].(int))
	}
	return m
}

// checkInvariants reports the first broken invariant of d as a division of in, or "".
func checkInvariants(in DivideInput, d Division) string {
	bs := boundsOf(in)
	var placed, hardSum, floors int64
	for _, b := range bs {
		hardSum += int64(b.hard)
		floors += int64(b.floor)
	}
	total := int64(max(in.Total, 0))
	for _, b := range bs {
		n, ok := d.Replicas[b.name]
		switch {
		case !ok:
			return "candidate " + b.name + " missing from Replicas"
		case n < 0 || n > b.hard:
			return "candidate " + b.name + " outside [0, hard cap]"
		case floors <= total && n < b.floor:
			return "candidate " + b.name + " below its floor"
		}
		placed += int64(n)
	}
	if len(d.Replicas) != len(bs) {
		return "Replicas holds names that are not candidates"
	}
	if len(in.Spread) > 0 {
		hardSum = spreadLevel{bs: bs, constraints: in.Spread}.capacity()
	}
	if placed != min(total, hardSum) {
		return "replicas do not sum to min(total, Σ hard caps)"
	}
	if int64(d.Unplaced) != total-placed {
		return "Unplaced is not the rest of the total"
	}
	return ""
}
