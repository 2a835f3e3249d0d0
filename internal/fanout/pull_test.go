package fanout

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TestPulledResult: a pull cluster counts as complete at a revision only when its agent
// reported that revision delivered whole into the record; before that it waits, with the
// counts the agent last reported.
func TestPulledResult(t *testing.T) {
	want := Want{Revision: "d2"}
	if _, ok := pulledResult(nil, want, true); ok {
		t.Error("a result without a record")
	}
	rec := &flotillav1.Delivery{Status: flotillav1.DeliveryStatus{Revision: "d1", Applied: 1, Ready: 1}}
	res, ok := pulledResult(rec, want, true)
	if !ok || res.Complete || res.Revision != "d2" || res.Message == "" {
		t.Errorf("the agent reported an older revision: %+v", res)
	}
	rec.Status.Revision = "d2"
	res, ok = pulledResult(rec, want, true)
	if !ok || !res.Complete || !res.ReadyAt("d2") || res.Applied != 1 {
		t.Errorf("the agent reported the revision: %+v", res)
	}
	if res, ok := pulledResult(rec, Want{}, false); !ok || !res.Complete || res.Revision != "d2" {
		t.Errorf("a chosen cluster without a want keeps what it reported: %+v", res)
	}
}
