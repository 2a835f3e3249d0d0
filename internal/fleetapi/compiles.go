package fleetapi

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// olderKept is how long a compile of an older generation than an RGD's newest is kept unused: a
// cluster held on an older revision (the newest does not compile there) uses it at every pass
// over the RGD, at least every resync.
const olderKept = 2 * resync

// missingKindRetry is how long a compile that found a kind missing is trusted for an unchanged
// fingerprint. The fingerprint changes when the missing CRD is installed, but discovery (which
// the REST mapping comes from) may show the CRD a moment after /openapi/v3 does: the compile
// that raced it is retried after this, even if nothing else changes.
const missingKindRetry = 30 * time.Second

// compileKey identifies a compile: an RGD at one generation against one cluster view's
// fingerprint for it. Identical clusters share a compile; a cluster whose referenced kinds
// differ gets its own.
type compileKey struct {
	uid         types.UID
	generation  int64
	fingerprint string
}

// compiles caches compiles by key, so that a steady fleet compiles nothing: each key is
// compiled once (concurrent callers wait for the one compile), a failure too, except one that
// could not read the cluster (retried at once) and a missing kind (retried after
// missingKindRetry). Older generations than the newest compiled are kept while they are used
// (olderKept): a cluster held on an older revision serves its instances with one.
type compiles struct {
	mu      sync.Mutex
	entries map[compileKey]*compileEntry
	now     func() time.Time
}

type compileEntry struct {
	mu       sync.Mutex
	done     bool
	at       time.Time
	used     time.Time // guarded by compiles.mu
	compiled *kro.Compiled
	err      error
}

func newCompiles() *compiles {
	return &compiles{entries: map[compileKey]*compileEntry{}, now: time.Now}
}

// get returns the compile of key, running compile if it has not run or its failure has expired.
func (c *compiles) get(key compileKey, compile func() (*kro.Compiled, error)) (*kro.Compiled, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		e = &compileEntry{}
		c.entries[key] = e
		c.evict(key)
	}
	e.used = c.now()
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done && !c.expired(e) {
		return e.compiled, e.err
	}
	e.compiled, e.err = compile()
	e.done, e.at = true, c.now()
	countCompile(e.err)
	return e.compiled, e.err
}

// maxCompilesPerRGD bounds the compiles kept for one RGD: one per distinct fingerprint, which a
// fleet of a few cluster flavours keeps small, but a group-version that keeps changing on a
// cluster (a chained RGD's kro.run kinds, as other RGDs are served) would grow without it.
const maxCompilesPerRGD = 32

// evict drops, for key's RGD, the compiles of older generations unused for olderKept and,
// beyond maxCompilesPerRGD, the oldest ones. c.mu is held.
func (c *compiles) evict(key compileKey) {
	var kept []compileKey
	for k := range c.entries {
		if k.uid != key.uid {
			continue
		}
		if k.generation < key.generation && c.now().Sub(c.entries[k].used) >= olderKept {
			delete(c.entries, k)
			continue
		}
		if k != key {
			kept = append(kept, k)
		}
	}
	for len(kept) >= maxCompilesPerRGD {
		oldest := 0
		for i := range kept {
			if c.entries[kept[i]].at.Before(c.entries[kept[oldest]].at) {
				oldest = i
			}
		}
		delete(c.entries, kept[oldest])
		kept = append(kept[:oldest], kept[oldest+1:]...)
	}
}

// expired says whether a compile's failure is to be retried.
func (c *compiles) expired(e *compileEntry) bool {
	switch compileReason(e.err) {
	case flotillav1.ReasonSchemaUnreadable:
		return true
	case flotillav1.ReasonSchemaNotFound:
		return c.now().Sub(e.at) >= missingKindRetry
	}
	return false
}

// forget drops every compile of an RGD.
func (c *compiles) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.uid == uid {
			delete(c.entries, k)
		}
	}
}
