package fleetapi

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/fanout"
)

// TestServedRunning: what the rollout gate sees each cluster run of an RGD: the revision it was
// planned with once the deliverer's latest result is of that plan's CRD, and otherwise the one
// its CRD names (Ready when Established).
func TestServedRunning(t *testing.T) {
	newCRD, oldCRD := &fanout.Want{Revision: "crd-v2"}, &fanout.Want{Revision: "crd-v1"}
	plans := map[string]clusterPlan{
		"canary":   {want: newCRD, served: "v1", row: flotillav1.APIClusterResult{ServedGeneration: 1}},
		"failing":  {want: newCRD, served: "v1", row: flotillav1.APIClusterResult{ServedGeneration: 1}},
		"held":     {want: newCRD, served: "v1", row: flotillav1.APIClusterResult{ServedGeneration: 1}},
		"pinned":   {want: oldCRD, pinned: "v1", served: "v1"},
		"creating": {want: newCRD, served: "v1"},
		"new":      {want: newCRD},
		"away":     {served: "v1", row: flotillav1.APIClusterResult{ServedGeneration: 1}},
	}
	results := map[string]deliver.Result{
		"canary":   {Revision: "crd-v2", Complete: true, Applied: 1, Ready: 1},
		"failing":  {Revision: "crd-v2", Applied: 0, Failed: 1, Permanent: true, Message: "invalid"},
		"held":     {Revision: "crd-v1", Complete: true, Applied: 1, Ready: 1},
		"pinned":   {Revision: "crd-v1", Complete: true, Applied: 1, Ready: 1},
		"creating": {Revision: "crd-v0", Complete: true, Applied: 1, Ready: 1},
		"away":     {Disconnected: true},
	}
	got := servedRunning(plans, "v2", func(c string) (deliver.Result, bool) { r, ok := results[c]; return r, ok })
	want := map[string]fanout.Running{
		"canary":   {Revision: "v2", Ready: true},
		"failing":  {Revision: "v2", Failed: "invalid"},
		"held":     {Revision: "v1", Ready: true},
		"pinned":   {Revision: "v1", Ready: true},
		"creating": {Revision: "v1"},
		"away":     {Revision: "v1", Ready: true, Unreachable: "not connected"},
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

// TestPinsFor: the APIPropagation's pins of the RGD's chosen clusters, the newest's too (a pin
// naming the newest is no hold of the gate's, but it is the person's).
func TestPinsFor(t *testing.T) {
	placer := &flotillav1.APIPropagation{Spec: flotillav1.APIPropagationSpec{RevisionPins: []flotillav1.APIRevisionPin{
		{ResourceGraphDefinition: "webapp", Cluster: "a", Revision: "v1"},
		{ResourceGraphDefinition: "other", Cluster: "b", Revision: "v9"},
		{ResourceGraphDefinition: "webapp", Cluster: "gone", Revision: "v1"},
	}}}
	got := pinsFor(placer, "webapp", []string{"a", "b"})
	if len(got) != 1 || got[0] != (flotillav1.RevisionPin{Cluster: "a", Revision: "v1"}) {
		t.Errorf("pins %v, want a at v1 only", got)
	}
}
