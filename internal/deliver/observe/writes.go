package observe

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-dev/flotilla/internal/render"
)

// CacheLag is how long a write is trusted over a spoke cache that does not show it yet. Watch
// events arrive within milliseconds; the margin covers a busy machine.
const CacheLag = 10 * time.Second

// write is one the deliverer made: the hash written and, when known, the resourceVersion the
// spoke stored it at.
type write struct {
	hash  string
	rv    string
	owner render.Owner
	at    time.Time
}

// Writing marks a write of the object under way, until Wrote or WriteFailed: a spoke event of
// the object seen meanwhile is remembered (Changed), so that Wrote knows whether the cluster
// has moved past the write already.
func (c *Cluster) Writing(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing == nil {
		c.writing = map[string]*inFlight{}
	}
	if f := c.writing[key]; f != nil {
		f.n++
		return
	}
	c.writing[key] = &inFlight{n: 1}
}

// WriteFailed ends a write marked by Writing that stored nothing.
func (c *Cluster) WriteFailed(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.doneWritingLocked(key)
}

// inFlight is a write under way (or several) and the newest resourceVersion a spoke event
// showed of the object meanwhile.
type inFlight struct {
	n    int
	seen string
}

// sawLocked remembers the resourceVersion a spoke event showed of an object being written.
func (c *Cluster) sawLocked(key, rv string) {
	if f := c.writing[key]; f != nil && newer(rv, f.seen) {
		f.seen = rv
	}
}

func (c *Cluster) doneWritingLocked(key string) (seen string) {
	f := c.writing[key]
	if f == nil {
		return ""
	}
	if f.n--; f.n <= 0 {
		delete(c.writing, key)
	}
	return f.seen
}

// newer reports whether resourceVersion a is newer than b. Kubernetes keeps them opaque; the
// API servers Flotilla writes to number them from etcd's revisions, and one that is not a
// number is never taken as newer.
func newer(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	if errA != nil {
		return false
	}
	if b == "" {
		return true
	}
	y, errB := strconv.ParseUint(b, 10, 64)
	return errB == nil && x > y
}

// Wrote records that owner just wrote an object with this hash, stored at resourceVersion rv
// (a write Writing marked; "" when unknown). If another owner wrote the same object within
// CacheLag, it returns that owner: the two deliveries may have raced, each reading the object
// before the other's write, and the other must look again. A write the cluster has already
// moved past (a spoke event showed a newer version of the object while it was under way:
// someone changed it right after) is not trusted over the cache: the next delivery reads what
// the cache shows.
func (c *Cluster) Wrote(key, hash string, owner render.Owner, rv string) (other render.Owner, raced bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if r, ok := c.writes[key]; ok && r.owner != owner && r.owner != (render.Owner{}) && now.Sub(r.at) < CacheLag {
		other, raced = r.owner, true
	}
	if seen := c.doneWritingLocked(key); rv != "" && newer(seen, rv) {
		delete(c.writes, key)
		return other, raced
	}
	c.recordLocked(key, write{hash: hash, rv: rv, owner: owner, at: now})
	return other, raced
}

// recordLocked remembers a write for CacheLag.
func (c *Cluster) recordLocked(key string, w write) {
	if c.writes == nil {
		c.writes = map[string]write{}
	}
	c.writes[key] = w
	if !c.sweeping {
		c.sweeping = true
		time.AfterFunc(CacheLag, c.sweepWrites)
	}
}

// Deleted records that the deliverer deleted the object moments ago, so that a delivery
// reading the cache within CacheLag (one woken by the deletion, say) asks the API server
// instead of believing a cache that still shows the object.
// A deletion is no write Writing marked: another owner's write of the object under way keeps
// its mark.
func (c *Cluster) Deleted(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordLocked(key, write{at: time.Now()})
}

// sweepWrites forgets the writes the cache has certainly caught up with, so memory holds only
// those of the last CacheLag, and runs again while some remain. A map emptied is let go: Go
// never shrinks a map, and one that held a bulk delivery's thousand writes per cluster would
// keep their room for good (about 230 bytes per object and cluster in the heap profile of
// `make bench --profile`).
func (c *Cluster) sweepWrites() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, r := range c.writes {
		if now.Sub(r.at) >= CacheLag {
			delete(c.writes, k)
		}
	}
	if len(c.writes) == 0 {
		c.writes = nil
	}
	c.sweeping = len(c.writes) > 0
	if c.sweeping {
		time.AfterFunc(CacheLag, c.sweepWrites)
	}
}

// WroteRecently reports whether the object was written with this hash within CacheLag, so
// that a cache that lags behind the write does not cause a second, redundant write.
func (c *Cluster) WroteRecently(key, hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.writes[key]
	return ok && r.hash == hash && time.Since(r.at) < CacheLag
}

// CacheBehind reports whether the object was written within CacheLag and the cache has not
// caught up with that write yet: cached (nil when the cache has no such object) has another
// hash, or is older than the write. The hash alone does not tell: an object written back as it
// was before a change in between (scaled down and up again around a failover) carries the
// same hash as the copy a cache that missed both writes still shows (a spoke back from an
// outage, its watch waiting out the reflector's backoff), and that copy's status is of its
// own generation, not of the one written.
func (c *Cluster) CacheBehind(key string, cached *unstructured.Unstructured) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.writes[key]
	if !ok || time.Since(r.at) >= CacheLag {
		return false
	}
	if cached == nil {
		return r.hash != ""
	}
	return r.hash != render.HashOf(cached) || newer(r.rv, cached.GetResourceVersion())
}
