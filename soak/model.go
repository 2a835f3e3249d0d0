package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// The hub objects the soak edits, in namespace ns. Propagations p0..p(maxProps-1) each select
// the ConfigMaps labelled propLabel=<its name>: an anchor ConfigMap that is never deleted (so a
// change never removes all of a Propagation's objects, which Flotilla holds for confirmation)
// and up to maxCMsPerProp others. Deployments d0..d(maxDeps-1) are in transparent mode with
// the dividing Placement.
const (
	ns            = "soak"
	propLabel     = "soak-prop"
	allPlacement  = "all"
	divPlacement  = "divide"
	maxProps      = 3
	maxCMsPerProp = 6
	maxDeps       = 3
)

// objKey names an object the soak expects on spokes: "configmaps/soak/p0-cm-3".
type objKey string

func cmKey(name string) objKey  { return objKey("configmaps/" + ns + "/" + name) }
func depKey(name string) objKey { return objKey("deployments/" + ns + "/" + name) }

// hubCM is a ConfigMap as the soak wrote it to the hub.
type hubCM struct {
	Prop  string
	Value string
}

// hubDep is a transparent-mode Deployment as the soak wrote it to the hub.
type hubDep struct {
	Replicas int32
	Image    string
}

// model is what the soak has written to the hub: the state its next edit starts from.
type model struct {
	props map[string]bool
	cms   map[string]hubCM
	deps  map[string]hubDep
}

func newModel() *model {
	return &model{props: map[string]bool{}, cms: map[string]hubCM{}, deps: map[string]hubDep{}}
}

// wanted returns the objects the hub wants on every spoke: a ConfigMap while it and its
// Propagation exist, a Deployment while it exists (its replicas are at least the number of
// spokes, so every spoke gets a share).
func (m *model) wanted() map[objKey]bool {
	w := map[objKey]bool{}
	for name, cm := range m.cms {
		if m.props[cm.Prop] {
			w[cmKey(name)] = true
		}
	}
	for name := range m.deps {
		w[depKey(name)] = true
	}
	return w
}

// editOp is one hub change: what the edit stream writes next.
type editOp struct {
	Verb string // create, update, delete
	Kind string // Propagation, ConfigMap, Deployment
	Name string
	CM   hubCM
	Dep  hubDep
}

func (o editOp) String() string { return fmt.Sprintf("%s %s %s/%s", o.Verb, o.Kind, ns, o.Name) }

// next draws the next hub change from rng, given the current state; apply records it once
// written. Propagations come and go rarely (a live one is deleted half as often as a missing
// one is created, so most are live at any time), ConfigMaps and Deployments often.
func (m *model) next(rng *rand.Rand, spokes int) editOp {
	r := rng.IntN(100)
	prop := fmt.Sprintf("p%d", rng.IntN(maxProps))
	switch {
	case r < 4 && m.props[prop]:
		return editOp{Verb: "delete", Kind: "Propagation", Name: prop}
	case r < 8 && !m.props[prop]:
		return editOp{Verb: "create", Kind: "Propagation", Name: prop}
	case r < 70:
		name := fmt.Sprintf("%s-cm-%d", prop, rng.IntN(maxCMsPerProp+1))
		if name == prop+"-cm-0" {
			name = prop + "-anchor"
		}
		cm := hubCM{Prop: prop, Value: fmt.Sprintf("v%d", rng.IntN(1<<30))}
		_, exists := m.cms[name]
		switch {
		case !exists:
			return editOp{Verb: "create", Kind: "ConfigMap", Name: name, CM: cm}
		case name != prop+"-anchor" && rng.IntN(3) == 0:
			return editOp{Verb: "delete", Kind: "ConfigMap", Name: name}
		default:
			return editOp{Verb: "update", Kind: "ConfigMap", Name: name, CM: cm}
		}
	default:
		name := fmt.Sprintf("d%d", rng.IntN(maxDeps))
		dep := hubDep{Replicas: int32(spokes + rng.IntN(2*spokes+1)), Image: fmt.Sprintf("registry.example/soak/app:v%d", rng.IntN(1000))}
		_, exists := m.deps[name]
		switch {
		case !exists:
			return editOp{Verb: "create", Kind: "Deployment", Name: name, Dep: dep}
		case rng.IntN(5) == 0:
			return editOp{Verb: "delete", Kind: "Deployment", Name: name}
		default:
			return editOp{Verb: "update", Kind: "Deployment", Name: name, Dep: dep}
		}
	}
}

// apply records a change written to the hub.
func (m *model) apply(op editOp) {
	switch op.Kind {
	case "Propagation":
		if op.Verb == "delete" {
			delete(m.props, op.Name)
		} else {
			m.props[op.Name] = true
		}
	case "ConfigMap":
		if op.Verb == "delete" {
			delete(m.cms, op.Name)
		} else {
			m.cms[op.Name] = op.CM
		}
	case "Deployment":
		if op.Verb == "delete" {
			delete(m.deps, op.Name)
		} else {
			m.deps[op.Name] = op.Dep
		}
	}
}

// wantHistory records, per object, when the hub started and stopped wanting it on the spokes
// (every spoke: the soak's Placements choose them all). A change that stops wanting an object
// is stamped before its request is sent (Flotilla cannot act on it earlier); one that starts
// wanting it again once the hub has answered (Flotilla cannot have seen it before then). Both
// stamps give Flotilla the benefit of the doubt.
type wantHistory struct {
	// unwanted lists, per object, the intervals in which the hub did not want it, in order;
	// the last one's End is zero while it lasts.
	unwanted map[objKey][]interval
	// everWanted are the objects the hub wanted at some time.
	everWanted map[objKey]bool
}

// interval is [Start, End); a zero End is open.
type interval struct {
	Start, End time.Time
}

func newWantHistory() *wantHistory {
	return &wantHistory{unwanted: map[objKey][]interval{}, everWanted: map[objKey]bool{}}
}

// record notes the change from wanted set before to after: objects that left were unwanted
// from sent, objects that came (back) wanted from answered.
func (h *wantHistory) record(before, after map[objKey]bool, sent, answered time.Time) {
	for k := range before {
		if !after[k] {
			h.unwanted[k] = append(h.unwanted[k], interval{Start: sent})
		}
	}
	for k := range after {
		h.everWanted[k] = true
		if !before[k] {
			if iv := h.unwanted[k]; len(iv) > 0 && iv[len(iv)-1].End.IsZero() {
				iv[len(iv)-1].End = answered
			}
		}
	}
}
