package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// faultKind names one kind of fault the soak injects.
type faultKind string

const (
	faultFreeze        faultKind = "freeze-apiserver" // SIGSTOP a spoke's API server, SIGCONT after Hold
	faultRestartAPI    faultKind = "restart-apiserver"
	faultRestartEtcd   faultKind = "restart-etcd"
	faultKillHub       faultKind = "kill-hub" // SIGKILL one hub replica, start it again after Hold
	faultSpokeEdit     faultKind = "spoke-edit"
	faultSpokeDelete   faultKind = "spoke-delete"
	minFaultGap                  = 4 * time.Second
	maxFaultGap                  = 12 * time.Second
	minFreeze                    = 2 * time.Second
	maxFreeze                    = 8 * time.Second
	maxHubDownTime               = 3 * time.Second
	hubKillsUntilShare           = 2 // hub kills happen only in the first 1/hubKillsUntilShare of the run
)

// faultKinds are the kinds in the order their weights are listed.
var faultKinds = []faultKind{faultFreeze, faultRestartAPI, faultRestartEtcd, faultKillHub, faultSpokeEdit, faultSpokeDelete}

// faultWeights are how often each kind is drawn, relative to the others.
var faultWeights = map[faultKind]int{faultFreeze: 3, faultRestartAPI: 2, faultRestartEtcd: 2, faultKillHub: 2, faultSpokeEdit: 3, faultSpokeDelete: 3}

// fault is one scheduled fault: when (from the start of the faults), what, and on which spoke
// (index into the spokes) or hub replica.
type fault struct {
	At     time.Duration `json:"at"`
	Kind   faultKind     `json:"kind"`
	Target int           `json:"target"`
	// Hold is how long a frozen API server stays stopped, or a killed hub replica down.
	Hold time.Duration `json:"hold,omitempty"`
	// Pick chooses which delivered object a spoke-side edit or deletion touches (an index
	// into the objects found there, modulo their number).
	Pick int `json:"pick,omitempty"`
}

func (f fault) String() string {
	target := fmt.Sprintf("spoke %d", f.Target+1)
	if f.Kind == faultKillHub {
		target = fmt.Sprintf("hub replica %d", f.Target)
	}
	s := fmt.Sprintf("%s on %s", f.Kind, target)
	if f.Hold > 0 {
		s += fmt.Sprintf(" for %s", f.Hold.Round(100*time.Millisecond))
	}
	return s
}

// schedule draws the faults of a run from its seed: the same seed, duration, spokes and hub
// replicas give the same schedule, so a failing run can be replayed. Faults are drawn 4 to
// 12 s apart; the runner carries them out one at a time (never two at once), each at its time
// but never sooner than 4 s after the previous one ended. Hub kills happen only in the first
// half of the run, so that the controller's last life is long enough to judge its memory.
func schedule(seed uint64, duration time.Duration, spokes, hubReplicas int) []fault {
	rng := rand.New(rand.NewPCG(seed, 0x50a4))
	total := 0
	for _, k := range faultKinds {
		total += faultWeights[k]
	}
	var out []fault
	at := time.Duration(0)
	for {
		at += minFaultGap + time.Duration(rng.Int64N(int64(maxFaultGap-minFaultGap)))
		if at >= duration {
			return out
		}
		n := rng.IntN(total)
		var kind faultKind
		for _, k := range faultKinds {
			if n < faultWeights[k] {
				kind = k
				break
			}
			n -= faultWeights[k]
		}
		if kind == faultKillHub && at > duration/hubKillsUntilShare {
			kind = faultFreeze
		}
		f := fault{At: at, Kind: kind, Target: rng.IntN(spokes), Pick: rng.IntN(1 << 20)}
		switch kind {
		case faultFreeze:
			f.Hold = minFreeze + time.Duration(rng.Int64N(int64(maxFreeze-minFreeze)))
		case faultKillHub:
			f.Target = rng.IntN(hubReplicas)
			f.Hold = time.Duration(rng.Int64N(int64(maxHubDownTime)))
		}
		out = append(out, f)
	}
}
