package percluster

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Compute returns what each chosen cluster gets this pass: its objects (pinned revision or
// latest, its share of the divided workloads, its overrides), their revision, the revision
// they are made from, and the shares to record. A cluster whose objects cannot be made is in
// Failed; the others carry on.
func Compute(in Input) Outcome {
	out := Outcome{Want: make(map[string]Want, len(in.Chosen)), Failed: map[string]string{}}
	pass := in.divide(&out)
	for _, c := range in.Chosen {
		w, withheld, err := in.on(c, pass)
		switch {
		case err != nil:
			out.Failed[c] = err.Error() // it keeps what it has
		case !withheld:
			out.Want[c] = w
		}
	}
	return out
}

// divide returns the pass of the divided workloads: their division by the Placement's replica
// policy from what each cluster runs now, with what a move holds until the clusters it waits
// for are Ready (division.Hold); the given pass when the owner's objects are not divided.
func (in Input) divide(out *Outcome) division.Pass {
	if !in.Divides() {
		return in.Given
	}
	objs := in.Latest.Objects
	div := division.ForPlacement(in.Placement)
	div.Chosen = make(map[string]map[string]string, len(in.Chosen))
	div.Room = make(map[string]map[string]int64, len(in.Chosen))
	for _, c := range in.Chosen {
		div.Chosen[c], div.Room[c] = in.Facts[c].Labels, in.Facts[c].Allocatable
	}
	div.Free, div.Fits, div.Requests, div.Totals = in.Free, in.Fits, division.Requests(objs), division.Workloads(objs)
	div.Have, div.Seed = in.Have, in.Owner.String()
	divided := division.Divide(div)
	out.Shares, out.Reports, out.Unplaced = divided.Shares, divided.Reports, divided.Messages
	scope := append(slices.Clip(objs), in.Scope...)
	if in.ReadyAt == nil {
		return division.NewPass(scope, divided.Shares)
	}
	var held *division.Pass // the pass with every change held, made on the first question
	breakFirst := in.Placement.Spec.Moves != nil && in.Placement.Spec.Moves.Order == flotillav1.MoveBreakBeforeMake
	replicas, stalled := division.Hold(division.Move{Chosen: in.Chosen, Shares: divided.Shares, Have: in.Have, BreakFirst: breakFirst,
		Ready: func(c string, replicas division.Replicas) bool {
			if held == nil {
				p := division.NewPass(scope, replicas)
				held = &p
			}
			w, withheld, err := in.on(c, *held)
			return err == nil && !withheld && in.ReadyAt(c, w.Revision)
		}})
	out.Stalled = stalled
	return division.NewPass(scope, replicas)
}

// on returns what cluster c gets with pass: the objects of the revision it is pinned to, or
// the latest; its share of the divided workloads (and of their HPAs' bounds); then its
// override rules. withheld is true when the pass leaves it nothing of the owner's objects.
func (in Input) on(c string, pass division.Pass) (w Want, withheld bool, err error) {
	base := in.Latest
	if pin := flotillav1.PinOf(in.Pins, c); pin != "" && pin != in.LatestName {
		p, loaded := in.Pinned[pin]
		switch {
		case !loaded:
			return Want{}, false, fmt.Errorf("pinned revision %s was not loaded", pin)
		case p.Err != nil:
			return Want{}, false, p.Err
		}
		base, w.Pinned = p.Revision, pin
		base.Name = pin
	}
	objs, revision := base.Objects, base.Digest
	if len(pass.Replicas) > 0 {
		divided, err := pass.Apply(objs, c)
		if err != nil {
			return Want{}, false, err
		}
		if len(objs) > 0 && len(divided) == 0 {
			return Want{}, true, nil // an HPA where its workload has no share
		}
		if !slices.Equal(divided, objs) {
			objs, revision = divided, render.Revision(divided)
		}
	}
	if facts := in.Facts[c]; override.Active(in.Rules, facts) {
		if objs, err = override.ForCluster(in.Rules, facts, objs); err != nil {
			return Want{}, false, err
		}
		revision = render.Revision(objs)
	}
	w.Objects, w.Revision, w.Base = objs, revision, &base
	w.Replicas = in.shares(c, pass, objs)
	return w, false, nil
}

// shares are what the record of cluster c keeps of the divided workloads among objs: the
// replicas the pass gives each there, and what the cluster is known to fit of it.
func (in Input) shares(c string, pass division.Pass, objs []*unstructured.Unstructured) []flotillav1.WorkloadReplicas {
	on := pass.On(c)
	if len(on) == 0 {
		return nil // nothing divided here: no object to look at
	}
	var out []flotillav1.WorkloadReplicas
	for _, o := range objs {
		key := render.Key(o)
		n, divided := on[key]
		if !divided {
			continue
		}
		r := flotillav1.WorkloadReplicas{Object: key, Replicas: int32(n)}
		if f, ok := in.Fits[key][c]; ok {
			r.Fits, r.FitsAllocatable = &f.Replicas, f.Allocatable
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b flotillav1.WorkloadReplicas) int { return strings.Compare(a.Object, b.Object) })
	return out
}
