package propagation

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// cacheLag is how long the controller trusts its own writes over a hub cache that does not
// show them yet. Watch events arrive within milliseconds; the margin covers a busy machine.
const cacheLag = 10 * time.Second

// ownWrites remembers the controller's latest status writes to each propagator for cacheLag, so that
// a reconcile reading a cache that does not show them yet does not write the same again.
type ownWrites struct {
	mu    sync.Mutex
	byUID map[types.UID]ownWrite
}

type ownWrite struct {
	status   *flotillav1.PropagationStatus
	statusAt time.Time
}

// latestStatus returns the status written within cacheLag, if any: the API server holds
// exactly that (nothing else writes a propagator's status), whatever the cache still shows.
func (o *ownWrites) latestStatus(uid types.UID) (flotillav1.PropagationStatus, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.byUID[uid]
	if w.status == nil || time.Since(w.statusAt) >= cacheLag {
		return flotillav1.PropagationStatus{}, false
	}
	return *w.status.DeepCopy(), true
}

// wroteStatus records a status written now.
func (o *ownWrites) wroteStatus(uid types.UID, status flotillav1.PropagationStatus) {
	o.record(uid, func(w *ownWrite) { w.status, w.statusAt = status.DeepCopy(), time.Now() })
}

// record changes uid's entry and forgets the entries older than cacheLag.
func (o *ownWrites) record(uid types.UID, change func(*ownWrite)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byUID == nil {
		o.byUID = map[types.UID]ownWrite{}
	}
	for id, w := range o.byUID {
		if time.Since(w.statusAt) > cacheLag {
			delete(o.byUID, id)
		}
	}
	w := o.byUID[uid]
	change(&w)
	o.byUID[uid] = w
}
