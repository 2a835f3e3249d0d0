package division

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Move is a division to reach from what runs now.
type Move struct {
	// Chosen are the clusters chosen now.
	Chosen []string
	// Shares are the division to reach; Have what each cluster runs now.
	Shares, Have Replicas
	// Ready reports whether a cluster is Ready with its replicas of the owner's divided
	// workloads in held (its delivery of them complete, at the generation written, and
	// Ready). held is the whole division, every reduction held, the same in every call of one
	// Hold: what a cluster gets may depend on the others' shares (an HPA's bounds).
	Ready func(cluster string, held Replicas) bool
	// BreakFirst breaks before it makes (moves.order BreakBeforeMake): a cluster that is to
	// run more replicas of a workload keeps what it runs until every chosen cluster that is to
	// run fewer is Ready at its new share, its surplus gone.
	BreakFirst bool
}

// Hold returns what each chosen cluster runs this pass: its share of each workload, except
// that a cluster that is to run fewer replicas of a workload than it runs now keeps them while
// another cluster running the workload is not Ready. What a cluster runs is what Flotilla
// wrote there, so a cluster that gained in an earlier pass looks the same as one whose share
// never changed: every one of them is waited for. A cluster that is not Ready for a while (one
// that cannot be reached included) therefore keeps the others at their higher replicas: more
// replicas than asked, never fewer available; taking such a cluster out of the division is
// failover's job. A cluster's readiness is judged with every reduction held, so a cluster that
// gains one workload while it gives up another is Ready once what it gains is; it is judged
// only when something is to be held. stalled names the clusters the holds wait for ("" when
// nothing is held).
//
// With BreakFirst the order is the other way round: a cluster that is to run more replicas of a
// workload keeps what it runs while another cluster running the workload is not Ready at its
// share (judged with every growth held). A cluster that shrank in an earlier pass looks the same
// as one whose share never changed, so every one of them is waited for until its surplus is
// gone; one that cannot be reached never confirms, so the workload waits for it: the point of
// the order is that it never runs twice.
func Hold(m Move) (replicas Replicas, stalled string) {
	o := makeFirst
	if m.BreakFirst {
		o = breakFirst
	}
	held := Replicas{} // every change the order holds, held: the conservative pass
	holding := false
	for w, shares := range m.Shares {
		held[w] = map[string]int64{}
		for _, c := range m.Chosen {
			n := shares[c]
			if o.holds(m, w, c) {
				n, holding = m.Have[w][c], true
			}
			held[w][c] = n
		}
	}
	if !holding {
		return m.Shares, "" // nothing to hold, and no readiness to judge
	}
	ready := map[string]bool{}
	isReady := func(c string) bool {
		r, judged := ready[c]
		if !judged {
			r = m.Ready(c, held)
			ready[c] = r
		}
		return r
	}
	replicas = Replicas{}
	waiting := map[string]bool{}
	for w, shares := range m.Shares {
		var notReady []string
		if slices.ContainsFunc(m.Chosen, func(c string) bool { return o.holds(m, w, c) }) {
			for _, c := range m.Chosen {
				if o.waitsFor(m, w, c) && !isReady(c) {
					notReady = append(notReady, c)
				}
			}
		}
		if len(notReady) == 0 {
			replicas[w] = shares
			continue
		}
		replicas[w] = held[w]
		for _, c := range notReady {
			waiting[c] = true
		}
	}
	if len(waiting) == 0 {
		return replicas, ""
	}
	names := make([]string, 0, len(waiting))
	for c := range waiting {
		names = append(names, c)
	}
	sort.Strings(names)
	return replicas, fmt.Sprintf(o.message, strings.Join(names, ", "))
}

// order is what a move holds and what it waits for.
type order struct {
	// holds says a cluster's change of a workload waits: make first holds reductions, break
	// first holds growth.
	holds func(m Move, w, c string) bool
	// waitsFor says a cluster must be Ready before the held changes of a workload go ahead:
	// every other cluster with a share (make first), every other cluster running it, at 0
	// included (break first).
	waitsFor func(m Move, w, c string) bool
	message  string
}

var (
	makeFirst = order{
		holds: shrinks,
		waitsFor: func(m Move, w, c string) bool {
			return m.Shares[w][c] > 0 && !shrinks(m, w, c)
		},
		message: "replicas stay where they run until the copies on %s are Ready (make before break)",
	}
	breakFirst = order{
		holds: grows,
		waitsFor: func(m Move, w, c string) bool {
			_, runs := m.Have[w][c]
			return runs && !grows(m, w, c)
		},
		message: "replicas are added elsewhere only once the copies on %s are Ready with fewer (break before make)",
	}
)

// shrinks reports whether cluster c is to run fewer replicas of workload w than it runs now.
func shrinks(m Move, w, c string) bool {
	now, ok := m.Have[w][c]
	return ok && now > m.Shares[w][c]
}

// grows reports whether cluster c is to run more replicas of workload w than it runs now (a
// cluster that runs none runs 0).
func grows(m Move, w, c string) bool {
	return m.Shares[w][c] > m.Have[w][c]
}
