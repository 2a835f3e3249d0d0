package dashboard

import (
	"testing"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Each object's state comes from its record's counts and what the owner's status names.
func TestObjectState(t *testing.T) {
	cm := object{Describe: "configmap a/settings", Name: "settings"}
	deploy := object{Describe: "deployment.apps a/web", Name: "web"}
	rec := func(st flotillav1.DeliveryStatus) *flotillav1.Delivery {
		st.Count = 2
		return &flotillav1.Delivery{Status: st}
	}
	drifted := &flotillav1.ClusterResult{Drifted: 1, DriftedObjects: []flotillav1.DriftedObject{{Object: cm.Describe}}}
	for _, c := range []struct {
		name string
		rec  *flotillav1.Delivery
		o    object
		res  *flotillav1.ClusterResult
		held bool
		want string
	}{
		{"all ready", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2}), cm, nil, false, stateReady},
		{"applied, not all ready", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 1}), cm, nil, false, stateApplied},
		{"not applied yet", rec(flotillav1.DeliveryStatus{}), cm, nil, false, statePending},
		{"the drifted object", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2, Drifted: 1}), cm, drifted, false, stateDrifted},
		{"its sibling is not drifted", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2, Drifted: 1}), deploy, drifted, false, stateReady},
		{"drift not named: the record's", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2, Drifted: 1}), deploy, nil, false, stateDrifted},
		{"fighting", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2, Fighting: 1}), cm,
			&flotillav1.ClusterResult{Fighting: 1, FightingObjects: []flotillav1.DriftedObject{{Object: cm.Describe}}}, false, stateConflict},
		{"the failed object", rec(flotillav1.DeliveryStatus{Applied: 1, Failed: 1, Message: "deployment.apps a/web: invalid"}), deploy, nil, false, stateFailed},
		{"its sibling was applied", rec(flotillav1.DeliveryStatus{Applied: 1, Failed: 1, Message: "deployment.apps a/web: invalid"}), cm, nil, false, stateApplied},
		{"refused for another owner", rec(flotillav1.DeliveryStatus{Applied: 1, Failed: 1, Message: "web: conflict with kubectl"}), deploy, nil, false, stateConflict},
		{"held", rec(flotillav1.DeliveryStatus{Applied: 2, Ready: 2}), cm, nil, true, stateHeld},
	} {
		if got := objectState(c.rec, c.o, c.res, c.held); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
