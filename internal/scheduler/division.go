package scheduler

import flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"

// ReplicaMode says how a divided workload's total is spread over its clusters.
type ReplicaMode string

const (
	// ModeWeighted divides the total in proportion to each candidate's Weight (the default).
	ModeWeighted ReplicaMode = "Weighted"
	// ModeCapacity divides the total in proportion to each candidate's Estimate.
	ModeCapacity ReplicaMode = "Capacity"
	// ModePacked uses as few candidates as it can: those already used first, then the most room.
	ModePacked ReplicaMode = "Packed"
)

// DecisionState is what a chosen cluster may take.
type DecisionState string

const (
	// StateActive takes shares.
	StateActive DecisionState = "Active"
	// StateCordoned keeps its previous share at most and never grows.
	StateCordoned DecisionState = "Cordoned"
	// StateFailedOver gets no share: its work is placed elsewhere.
	StateFailedOver DecisionState = "FailedOver"
	// StateReturning gets no share until the fail-back window ends.
	StateReturning DecisionState = "Returning"
)

// Unbounded is the value of Candidate.Max and Candidate.LimitFit when nothing bounds them,
// and of Candidate.Estimate when the cluster's room is unknown.
const Unbounded int32 = -1

// Reasons a Division gives.
const (
	// ReasonPlaced: every replica is placed within every cluster's estimated room.
	ReasonPlaced = flotillav1.ReasonPlaced
	// ReasonInsufficientCapacity: some replicas are placed above a cluster's estimated room
	// (Overfill); expect Pending pods there until the cluster grows.
	ReasonInsufficientCapacity = flotillav1.ReasonInsufficientCapacity
	// ReasonLimitsExceeded: no cluster's max or placement limit admits some replicas (Unplaced).
	ReasonLimitsExceeded = flotillav1.ReasonLimitsExceeded
	// ReasonSpreadUnsatisfiable: a spread constraint is not met: fewer domains than its
	// minDomains, or DoNotSchedule left replicas unplaced to keep the skew.
	ReasonSpreadUnsatisfiable = flotillav1.ReasonSpreadUnsatisfiable
)

// Candidate is one chosen cluster as Divide sees it. Every number is absolute: percentages
// are resolved against the total by the caller.
type Candidate struct {
	Name string
	// Labels are the cluster's labels; spread reads its topology keys from them.
	Labels map[string]string
	// Tier is the index of the cluster's tier; earlier tiers are filled first.
	Tier int
	// State is the cluster's decision state; "" means Active.
	State DecisionState
	// Weight is the share weight of ModeWeighted; 0 is a warm standby that takes replicas only
	// when no weighted candidate can.
	Weight int32
	// Min is the floor, Max the cap (Unbounded: none).
	Min, Max int32
	// LimitFit is how many replicas the cluster's placement limits admit for this workload,
	// its own share included; Unbounded: no limit.
	LimitFit int32
	// Estimate is how many replicas the cluster seems to have room for; Unbounded: unknown.
	// It is advisory: it shapes a division, never triggers one.
	Estimate int32
	// Unschedulable counts replicas pending Unschedulable here beyond the caller's threshold,
	// less those already shifted; Divide shifts that many elsewhere.
	Unschedulable int32
}

// DivideInput is everything a division depends on.
type DivideInput struct {
	// Total is the workload's replicas (the hub object's spec.replicas).
	Total int32
	// Mode is how to divide; "" means ModeWeighted.
	Mode ReplicaMode
	// Spread balances the total over the domains of each constraint's topology key, nested
	// in list order (spread.go); none: no spread.
	Spread []SpreadConstraint
	// Clusters are the candidates, in any order.
	Clusters []Candidate
	// Previous is the division in force; nil if none is known. A Previous without a Key (made
	// by an older Flotilla, or read back from what runs) is adopted when it is what a fresh
	// division would give, and otherwise re-divided sticky to where replicas run.
	Previous *Division
	// Seed identifies the workload (its UID): ties are broken by a hash of it and the cluster
	// name, so remainders of different workloads land on different clusters.
	Seed string
	// Rebalance asks for a fresh division whatever the Previous.
	Rebalance bool
}

// Division is a workload's replicas per cluster.
type Division struct {
	// Key hashes the decisive inputs the division was computed from (see divisionKey).
	Key string
	// Replicas holds every candidate, zeros included.
	Replicas map[string]int32
	// Overfill is the part of Replicas above a cluster's estimated room, where it is not zero.
	Overfill map[string]int32
	// Unplaced counts the replicas no cluster's hard cap admits.
	Unplaced int32
	// Reason is one of the Reason constants; Message explains it with numbers.
	Reason  string
	Message string
}

// Divide returns one workload's replicas per cluster. It is pure: no I/O, no clock.
//
// It divides by Webster's method (Sainte-Laguë): each replica goes, one seat at a time, to the
// candidate with the highest weight/(2·seats+1), after every candidate got its floor, never
// above a cap. Ties go to the candidate that held that seat in Previous, then to a stable hash
// of the seed and the cluster name, never to the name. See choosePath for when a division is
// computed afresh, adjusted, or kept.
func Divide(in DivideInput) Division {
	key := divisionKey(in)
	route := choosePath(in, key)
	bs := boundsOf(in)
	seats := make([]int32, len(bs))
	if route != pathFresh && route != pathAdopt {
		seats = startFromPrevious(bs, in.Previous)
	}
	packed := in.Mode == ModePacked
	if len(in.Spread) == 0 {
		adjustSeats(bs, seats, placeable(bs, in.Total), packed)
		return report(key, in.Total, bs, seats, spreadReport{})
	}
	sp := spreadReport{}
	fillSpread(spreadLevel{bs: bs, seats: seats, constraints: in.Spread, seed: in.Seed, packed: packed}, int64(max(in.Total, 0)), &sp)
	sp.unlabelled(bs)
	return report(key, in.Total, bs, seats, sp)
}

// placeable is how many of total replicas the hard caps admit.
func placeable(bs []*bounds, total int32) int64 {
	var room int64
	for _, b := range bs {
		room += int64(b.hard)
	}
	return min(int64(max(total, 0)), room)
}

// startFromPrevious returns the previous seats, cut to today's hard caps, with the replicas
// reported unschedulable taken off their cluster (never below its floor) to be placed again.
func startFromPrevious(bs []*bounds, previous *Division) []int32 {
	seats := make([]int32, len(bs))
	for i, b := range bs {
		seats[i] = min(max(previous.Replicas[b.name], 0), b.hard)
		if b.unschedulable > 0 && seats[i] > b.floor {
			seats[i] -= min(b.unschedulable, seats[i]-b.floor)
		}
	}
	return seats
}
