package division

import (
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
)

// Replicas are replica counts by workload (render.Key) and cluster.
type Replicas map[string]map[string]int64

// On returns a cluster's replicas of every workload.
func (r Replicas) On(cluster string) map[string]int64 {
	out := map[string]int64{}
	for w, byCluster := range r {
		if n, ok := byCluster[cluster]; ok {
			out[w] = n
		}
	}
	return out
}

// Divides reports whether a Placement's policy divides the workloads of an owner: transparent
// mode divides unless told to duplicate, Propagations duplicate unless told to divide.
func Divides(policy *flotillav1.ReplicaPolicy, transparent bool) bool {
	if policy == nil {
		return transparent
	}
	return policy.Mode != flotillav1.ReplicaModeDuplicate
}

// Divisible reports whether objects of a kind are workloads a Placement can divide: apps/v1
// Deployments, StatefulSets and ReplicaSets.
func Divisible(gk schema.GroupKind) bool {
	return gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "ReplicaSet")
}

// Workloads returns the total replicas of the divisible workloads among objs, by render.Key:
// those of a Divisible kind that set spec.replicas.
func Workloads(objs []*unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	for _, o := range objs {
		if !Divisible(o.GroupVersionKind().GroupKind()) {
			continue
		}
		if n, found, err := unstructured.NestedInt64(o.Object, "spec", "replicas"); found && err == nil {
			out[render.Key(o)] = n
		}
	}
	return out
}

// Input is what a division is computed from.
type Input struct {
	// Policy is the Placement's replica policy; nil divides evenly.
	Policy *flotillav1.ReplicaPolicy
	// Spread is the Placement's spread: the total is balanced over the values of each
	// constraint's cluster label first.
	Spread []flotillav1.SpreadConstraint
	// Tiers are the Placement's tiers: earlier ones are filled first.
	Tiers []flotillav1.ClusterTier
	// Chosen are the clusters the Placement chooses, with their labels (for the policy's
	// cluster groups and the spread's topology keys).
	Chosen map[string]map[string]string
	// States are the chosen clusters' decision states (Placement status); a FailedOver or
	// Returning cluster's share is 0. Missing: Active.
	States map[string]flotillav1.DecisionState
	// Free is what each chosen cluster's placement limits admit of this owner's workloads
	// (Free: the limits minus what other owners placed there), in the units of Room; a cluster
	// missing has no limits. A workload takes no more replicas of a cluster than fit, and the
	// workloads divided before it (in key order) take their part first.
	Free map[string]Usage
	// Fits are what clusters were found to fit of each workload (by workload, then cluster)
	// when some of its replicas stayed Unschedulable there: the division gives such a cluster
	// no more while the others have room, as long as its allocatable resources (Room) are
	// what they were then.
	Fits map[string]map[string]Fit
	// Room is what each chosen cluster can allocate ("cpu" in millicores, "memory" in bytes,
	// "pods"), for the Capacity and Packed modes; a cluster missing has unknown room.
	Room map[string]map[string]int64
	// Requests are what one replica of each workload requests (Requests), by render.Key.
	Requests map[string]map[string]int64
	// Totals are the workloads' spec.replicas, by render.Key (Workloads).
	Totals map[string]int64
	// Have is what each cluster runs now (the records' spec.replicas): the previous division.
	Have Replicas
	// Seed breaks ties without favouring a name: the owner.
	Seed string
}

// Outcome is a division and what it could not place.
type Outcome struct {
	Shares Replicas
	// Messages say, per workload, why some replicas were not placed (every cluster at its
	// maximum), with numbers; none when everything is placed.
	Messages map[string]string
	// Reports say, per workload, how it is divided: the scheduler's reason (Placed,
	// InsufficientCapacity, LimitsExceeded or SpreadUnsatisfiable) and its message, with the
	// numbers.
	Reports map[string]Report
}

// Report is how one workload is divided.
type Report struct {
	Reason, Message string
}

// Divide divides each workload's total over the chosen clusters.
func Divide(in Input) Outcome {
	out := Outcome{Shares: Replicas{}, Messages: map[string]string{}, Reports: map[string]Report{}}
	free := make(map[string]Usage, len(in.Free))
	for c, u := range in.Free {
		free[c] = Usage{}.Add(u) // a copy: each workload's shares are taken from it
	}
	for _, w := range sortedKeys(in.Totals) {
		total := in.Totals[w]
		mode := modeOf(in.Policy)
		cands := candidates(in, total)
		for i := range cands {
			if mode != scheduler.ModeWeighted {
				cands[i].Estimate = room(in.Room[cands[i].Name], in.Requests[w])
			}
			if f, ok := in.Fits[w][cands[i].Name]; ok && f.Holds(in.Room[cands[i].Name]) {
				if est := cands[i].Estimate; est == scheduler.Unbounded || f.Replicas < est {
					cands[i].Estimate = f.Replicas
				}
			}
			if f, limited := free[cands[i].Name]; limited {
				cands[i].LimitFit = room(f, in.Requests[w])
			}
		}
		div := scheduler.Divide(scheduler.DivideInput{
			Total: clamp(total), Mode: mode, Seed: in.Seed + "/" + w,
			Spread: spreadOf(in.Spread), Clusters: cands,
			Previous: previous(in.Have[w], in.Chosen),
		})
		shares := make(map[string]int64, len(div.Replicas))
		for c, n := range div.Replicas {
			shares[c] = int64(n)
			if f, limited := free[c]; limited {
				f.take(int64(n), in.Requests[w])
			}
		}
		out.Shares[w] = shares
		if div.Unplaced > 0 {
			out.Messages[w] = div.Message
		}
		out.Reports[w] = Report{Reason: div.Reason, Message: div.Message}
	}
	return out
}

// candidates are the chosen clusters with their tier, state, and the weight, minimum and
// maximum of the first policy entry each matches.
func candidates(in Input, total int64) []scheduler.Candidate {
	policy := in.Policy
	out := make([]scheduler.Candidate, 0, len(in.Chosen))
	for name, lbls := range in.Chosen {
		c := scheduler.Candidate{Name: name, Labels: lbls, Weight: 1, Max: scheduler.Unbounded, LimitFit: scheduler.Unbounded, Estimate: scheduler.Unbounded}
		c.Tier, _ = scheduler.TierOf(in.Tiers, name, lbls)
		switch in.States[name] {
		case flotillav1.DecisionFailedOver:
			c.State = scheduler.StateFailedOver
		case flotillav1.DecisionReturning:
			c.State = scheduler.StateReturning
		}
		if e := entryFor(policy, name, lbls); e != nil {
			if e.Weight != nil {
				c.Weight = *e.Weight
			}
			if e.Min != nil {
				c.Min = resolve(*e.Min, total, false)
			}
			if e.Max != nil {
				c.Max = resolve(*e.Max, total, true)
			}
		}
		out = append(out, c)
	}
	return out
}

// entryFor returns the first policy entry that matches a cluster, nil if none does.
func entryFor(policy *flotillav1.ReplicaPolicy, name string, lbls map[string]string) *flotillav1.ClusterReplicas {
	if policy == nil {
		return nil
	}
	for i := range policy.Clusters {
		if e := &policy.Clusters[i]; scheduler.InGroup(e.ClusterNames, e.ClusterSelector, name, lbls) {
			return e
		}
	}
	return nil
}

// resolve turns a minimum or maximum into replicas: a number as it is, a percentage of the
// total rounded down (a minimum) or up (a maximum).
func resolve(v intstr.IntOrString, total int64, roundUp bool) int32 {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(clamp(total)), roundUp)
	if err != nil || n < 0 {
		return 0
	}
	return int32(min(n, math.MaxInt32))
}

// previous is what runs now on the chosen clusters, as a division without a key: kept when it
// is what a fresh division gives, else replaced by one that keeps replicas where they run.
func previous(have map[string]int64, chosen map[string]map[string]string) *scheduler.Division {
	if len(have) == 0 {
		return nil
	}
	p := &scheduler.Division{Replicas: map[string]int32{}}
	for c, n := range have {
		if _, ok := chosen[c]; ok {
			p.Replicas[c] = clamp(n)
		}
	}
	return p
}

func clamp(n int64) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// modeOf is the scheduler's mode for a policy: Weighted unless it says Capacity or Packed.
func modeOf(policy *flotillav1.ReplicaPolicy) scheduler.ReplicaMode {
	if policy != nil {
		switch policy.Mode {
		case flotillav1.ReplicaModeCapacity:
			return scheduler.ModeCapacity
		case flotillav1.ReplicaModePacked:
			return scheduler.ModePacked
		}
	}
	return scheduler.ModeWeighted
}

// room is how many replicas that request what one replica requests fit in what a cluster can
// allocate: the fewest over cpu, memory and pods that both sides know; unknown
// (scheduler.Unbounded) when the cluster's room is not known at all.
func room(allocatable, request map[string]int64) int32 {
	if len(allocatable) == 0 {
		return scheduler.Unbounded
	}
	fits := int64(math.MaxInt32)
	known := false
	for res, have := range allocatable {
		need := request[res]
		if res == "pods" {
			need = 1
		}
		if need <= 0 {
			continue
		}
		fits, known = min(fits, have/need), true
	}
	if !known {
		return scheduler.Unbounded
	}
	return clamp(fits)
}

// spreadOf is the scheduler's spread for a Placement's: unset numbers are left at 0, which the
// scheduler reads as the API's defaults (maxSkew 1, minDomains 1, ScheduleAnyway).
func spreadOf(spread []flotillav1.SpreadConstraint) []scheduler.SpreadConstraint {
	var out []scheduler.SpreadConstraint
	for _, sc := range spread {
		c := scheduler.SpreadConstraint{TopologyKey: sc.TopologyKey, WhenUnsatisfiable: scheduler.ScheduleAnyway}
		if sc.MaxSkew != nil {
			c.MaxSkew = *sc.MaxSkew
		}
		if sc.MinDomains != nil {
			c.MinDomains = *sc.MinDomains
		}
		if sc.WhenUnsatisfiable == flotillav1.DoNotSchedule {
			c.WhenUnsatisfiable = scheduler.DoNotSchedule
		}
		out = append(out, c)
	}
	return out
}

// FollowsCluster reports whether a division by a Placement's spec depends on what a change of
// Cluster c may have changed (its labels, room, placement limits or what is placed on it), so
// that it calls for a new one: a spread or tiers (they read labels), the Capacity and Packed
// modes, an entry that selects clusters by label, or, when the Placement divides, placement
// limits on c or moves.unschedulableAfter (transparent says the owners are transparent-mode
// objects, which divide by default).
func FollowsCluster(spec flotillav1.PlacementSpec, transparent bool, c *flotillav1.Cluster) bool {
	if len(spec.Spread) > 0 || len(spec.Tiers) > 0 {
		return true
	}
	if c != nil && len(c.Spec.PlacementLimits) > 0 && Divides(spec.Replicas, transparent) {
		return true
	}
	if spec.Moves != nil && spec.Moves.UnschedulableAfter != nil && Divides(spec.Replicas, transparent) {
		return true // what a cluster fits is forgotten when its allocatable resources change
	}
	policy := spec.Replicas
	if policy == nil {
		return false
	}
	if policy.Mode == flotillav1.ReplicaModeCapacity || policy.Mode == flotillav1.ReplicaModePacked {
		return true
	}
	for _, e := range policy.Clusters {
		if e.ClusterSelector != nil {
			return true
		}
	}
	return false
}

// ForPlacement returns the part of a division's input that a Placement gives: its replica
// policy, spread and tiers, and the states its decisions record (Active ones left out).
func ForPlacement(pl *flotillav1.Placement) Input {
	states := map[string]flotillav1.DecisionState{}
	for _, d := range pl.Status.Decisions {
		if d.State != "" && d.State != flotillav1.DecisionActive {
			states[d.ClusterName] = d.State
		}
	}
	return Input{Policy: pl.Spec.Replicas, Spread: pl.Spec.Spread, Tiers: pl.Spec.Tiers, States: states}
}

// Requests returns what one replica of each divisible workload among objs requests, by
// render.Key: the sum over its pod template's containers of cpu (millicores) and memory
// (bytes) requests; a workload that requests neither is left out.
func Requests(objs []*unstructured.Unstructured) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	workloads := Workloads(objs)
	if len(workloads) == 0 {
		return out
	}
	// One walk of objs, each key computed once: looking for each workload's object among all
	// of them took a million keys for a thousand Deployments, in every pass.
	for _, o := range objs {
		key := render.Key(o)
		if _, ok := workloads[key]; !ok {
			continue
		}
		if req := templateRequests(o); len(req) > 0 {
			out[key] = req
		}
	}
	return out
}

// templateRequests sums a workload's containers' cpu and memory requests.
func templateRequests(o *unstructured.Unstructured) map[string]int64 {
	containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	out := map[string]int64{}
	for _, c := range containers {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		requests, _, _ := unstructured.NestedMap(cm, "resources", "requests")
		if q, ok := quantity(requests["cpu"]); ok {
			out["cpu"] += q.MilliValue()
		}
		if q, ok := quantity(requests["memory"]); ok {
			out["memory"] += q.Value()
		}
	}
	return out
}

// quantity reads a resource quantity as a manifest may write it: "500m", "1Gi", 2 or 0.5.
func quantity(v any) (resource.Quantity, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}
