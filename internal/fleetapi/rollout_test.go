package fleetapi

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fanout"
)

// TestServedRunning: what the rollout gate sees each cluster run of an RGD: the revision the
// deliverer's latest result carries when an earlier pass delivered it, and otherwise the one the
// cluster's CRD names (Ready when Established), as after a restart.
func TestServedRunning(t *testing.T) {
	serving := func(revision string, generation int64) clusterRead {
		return clusterRead{plan: clusterPlan{served: revision, row: flotillav1.APIClusterResult{ServedGeneration: generation}}}
	}
	reads := map[string]clusterRead{
		"canary":    serving("v1", 1),
		"failing":   serving("v1", 1),
		"held":      serving("v1", 1),
		"creating":  serving("v1", 0),
		"new":       {},
		"away":      serving("v1", 1),
		"restarted": serving("v2", 2),
	}
	carried := map[string]string{"crd-v2": "v2", "crd-v1": "v1"}
	results := map[string]deliver.Result{
		"canary":    {Revision: "crd-v2", Complete: true, Applied: 1, Ready: 1},
		"failing":   {Revision: "crd-v2", Applied: 0, Failed: 1, Permanent: true, Message: "invalid"},
		"held":      {Revision: "crd-v1", Complete: true, Applied: 1, Ready: 1},
		"creating":  {Revision: "crd-v0", Complete: true, Applied: 1, Ready: 1},
		"away":      {Disconnected: true},
		"restarted": {Revision: "crd-v2-before-the-restart", Complete: true, Applied: 1, Ready: 1},
	}
	got := servedRunning(reads, func(rev string) (string, bool) { name, ok := carried[rev]; return name, ok },
		func(c string) (deliver.Result, bool) { r, ok := results[c]; return r, ok })
	want := map[string]fanout.Running{
		"canary":    {Revision: "v2", Ready: true},
		"failing":   {Revision: "v2", Failed: "invalid"},
		"held":      {Revision: "v1", Ready: true},
		"creating":  {Revision: "v1"},
		"away":      {Revision: "v1", Ready: true, Unreachable: "not connected"},
		"restarted": {Revision: "v2", Ready: true},
	}
	if len(got) != len(want) {
		t.Errorf("running %v, want %v", got, want)
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("%s: %+v, want %+v", c, got[c], w)
		}
	}
}

// TestPinsOf: every pin the APIPropagation sets for the RGD, of a chosen cluster or not (the
// runner keeps their revisions; the gate looks at the chosen ones), the newest's too (a pin
// naming the newest is no hold of the gate's, but it is the person's).
func TestPinsOf(t *testing.T) {
	placer := &flotillav1.APIPropagation{Spec: flotillav1.APIPropagationSpec{RevisionPins: []flotillav1.APIRevisionPin{
		{ResourceGraphDefinition: "webapp", Cluster: "a", Revision: "v1"},
		{ResourceGraphDefinition: "other", Cluster: "b", Revision: "v9"},
		{ResourceGraphDefinition: "webapp", Cluster: "gone", Revision: "v1"},
	}}}
	got := pinsOf(placer, "webapp")
	if len(got) != 2 || got[0] != (flotillav1.RevisionPin{Cluster: "a", Revision: "v1"}) || got[1].Cluster != "gone" {
		t.Errorf("pins %v, want a and gone at v1", got)
	}
}
