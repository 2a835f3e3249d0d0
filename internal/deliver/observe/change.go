package observe

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Changed judges a change a spoke watch reports of one of owner's objects (desired is what
// owner delivers under that key; deleted: the object is gone): whether the next delivery must
// look at the object again, and how long that look waits. Changes Flotilla made itself
// compare equal and need nothing; so does a change to an object no delivery confirmed yet
// (the delivery in flight decides). A drift that undoes a recent correction waits for the
// object's backoff (fights.go), unless it starts a fight, which is reported at once. drifted
// says the object differs from what was applied (or is gone), not merely its readiness changed.
func (c *Cluster) Changed(owner render.Owner, key string, desired, live *unstructured.Unstructured, deleted bool, ignore [][]string) (look bool, wait time.Duration, drifted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if live != nil {
		c.sawLocked(key, live.GetResourceVersion())
	}
	v := c.confirmed[owner]
	if !v.Known(key) {
		return false, 0, false
	}
	drifted = deleted
	if !deleted {
		var changed bool
		if changed, drifted = c.changedLocked(v, key, desired, live, ignore); !changed {
			return false, 0, false
		}
	}
	var started bool
	if drifted {
		wait, started = c.undoneLocked(key, render.HashOf(desired), time.Now())
	}
	c.touchLocked(owner, key)
	delete(c.writes, key)
	if started {
		wait = 0
	}
	return true, wait, drifted
}

// changedLocked reports whether a live object needs another look: it differs from what
// Flotilla's apply stores in a way not already recorded, or its readiness changed; drifted
// says it differs.
func (c *Cluster) changedLocked(v *Confirmed, key string, desired, live *unstructured.Unstructured, ignore [][]string) (changed, drifted bool) {
	paths := drift.Compare(c.expectedLocked(key, desired), live.Object, ignore)
	if recorded, ok := v.Drifted[key]; ok {
		return !SameFields(recorded.Fields, paths), paths != nil
	}
	if paths != nil {
		return true, true
	}
	// Readiness follows the watch too: an object that became ready, or stopped being ready,
	// is looked at again now rather than at the next periodic recheck.
	ready, _ := Ready(live)
	return ready != v.Ready[key], false
}

// Ready reports whether kstatus finds the object Current (a Deployment Available and rolled
// out, a CRD Established, a ConfigMap at once), and otherwise why not.
func Ready(obj *unstructured.Unstructured) (bool, string) {
	res, err := status.Compute(obj)
	switch {
	case err != nil:
		return false, err.Error()
	case res.Status == status.CurrentStatus:
		return true, ""
	default:
		return false, fmt.Sprintf("%s: %s", res.Status, res.Message)
	}
}
