package inventory

import (
	"encoding/json"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultCacheBytesPerCluster is the default bound on what one spoke's cache keeps whole
// (Options.CacheBytesPerCluster), in estimated bytes of JSON.
const DefaultCacheBytesPerCluster = 64 << 20

// cacheBudget accounts for what one engaged spoke's cache keeps whole, against a bound: an
// object that would take the cache past it is kept as a stub instead, and read from the spoke
// when needed. Sizes are estimates (the object's JSON size), counted at the transform, before
// the object enters the cache; deletions are counted by an event handler on every informer of
// the cache (newInformer).
type cacheBudget struct {
	cluster string
	limit   int64
	log     logr.Logger

	mu      sync.Mutex
	entries map[types.UID]int64 // size of each whole object; -1 for a stub
	bytes   int64               // of the whole objects
	objects int64               // whole
	stubs   int64
	full    bool // an object was stubbed for want of room, and the cache has not drained since
}

func newCacheBudget(cluster string, limit int64, log logr.Logger) *cacheBudget {
	if limit <= 0 {
		limit = DefaultCacheBytesPerCluster
	}
	return &cacheBudget{cluster: cluster, limit: limit, log: log, entries: map[types.UID]int64{}}
}

// admit reports whether an object of a known owner may be kept whole: whether it fits, its
// previous version (same UID) given back first. One that does not fit is counted as a stub.
func (b *cacheBudget) admit(uid types.UID, size int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropLocked(uid)
	if b.bytes+size > b.limit {
		if !b.full {
			b.full = true
			b.log.Info("Spoke cache is at its bound: objects past it are kept as stubs and read from the spoke when needed, and their changes are found by deliveries, not watches (raise --spoke-cache-bytes if the spoke's delivered objects are this large)",
				"limit", b.limit, "cachedBytes", b.bytes, "cachedObjects", b.objects)
		}
		b.entries[uid] = -1
		b.stubs++
		return false
	}
	b.entries[uid] = size
	b.bytes += size
	b.objects++
	return true
}

// stub counts an object kept as a stub.
func (b *cacheBudget) stub(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropLocked(uid)
	b.entries[uid] = -1
	b.stubs++
}

// forget gives back what a deleted object took.
func (b *cacheBudget) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropLocked(uid)
	if b.full && b.bytes < b.limit*9/10 {
		b.full = false
		b.log.Info("Spoke cache is below its bound again", "limit", b.limit, "cachedBytes", b.bytes)
	}
}

func (b *cacheBudget) dropLocked(uid types.UID) {
	size, ok := b.entries[uid]
	if !ok {
		return
	}
	delete(b.entries, uid)
	if size < 0 {
		b.stubs--
		return
	}
	b.bytes -= size
	b.objects--
}

// totals is what the metrics export.
func (b *cacheBudget) totals() (bytes, objects, stubs int64, full bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes, b.objects, b.stubs, b.full
}

// uidOf is the UID of an object or of a deleted object's last state.
func uidOf(obj any) types.UID {
	if o, err := meta.Accessor(obj); err == nil {
		return o.GetUID()
	}
	return ""
}

// sizeOf estimates an object's size as JSON.
func sizeOf(obj any) int64 {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return jsonSize(u.Object)
	}
	raw, _ := json.Marshal(obj)
	return int64(len(raw))
}

func jsonSize(v any) int64 {
	switch x := v.(type) {
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + 4 + jsonSize(e)
		}
		return n
	case []any:
		n := int64(2)
		for _, e := range x {
			n += 1 + jsonSize(e)
		}
		return n
	case string:
		return int64(len(x)) + 2
	default:
		return 8
	}
}
