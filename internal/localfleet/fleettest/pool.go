package fleettest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
)

// In a test binary run through Main, a fleet whose test passed is not stopped: it is paused
// (no CPU while it waits) and handed to the next test that asks for the same planes, resumed
// and reset (localfleet.Fleet.Reset: every object stored since it started is gone, its
// controllers restarted, its audit logs read afresh). A fleet takes seconds of CPU to start and
// a fraction of a second to reset; the integration suites start about a hundred fleets. A fleet
// whose test failed is stopped as before; a plane a test stopped is started again by the reset;
// a fleet whose reset fails (a component that exited by itself) is stopped and a fresh one
// started; Main stops the fleets kept when the tests are done.

// maxIdlePlanes bounds the planes of the fleets kept between tests (a paused plane holds 300 to
// 500 MB of memory).
const maxIdlePlanes = 12

var pool struct {
	sync.Mutex
	on   bool
	idle []*idleFleet // least recently used first
}

type idleFleet struct {
	key   string
	fleet *localfleet.Fleet
	dir   string
}

// Main runs the tests of a package whose TestMain calls it, handing fleets on between its
// tests, and stops every fleet kept when they are done. It returns m.Run's exit code.
func Main(m *testing.M) int {
	pool.Lock()
	pool.on = true
	pool.Unlock()
	code := m.Run()
	pool.Lock()
	idle := pool.idle
	pool.idle, pool.on = nil, false
	pool.Unlock()
	for _, f := range idle {
		f.stop()
	}
	return code
}

// poolKey names a fleet's planes in a form that does not depend on their order.
func poolKey(planes []localfleet.PlaneSpec) string {
	sorted := slices.SortedFunc(slices.Values(planes), func(a, b localfleet.PlaneSpec) int { return cmp.Compare(a.Name, b.Name) })
	return fmt.Sprintf("%#v", sorted)
}

// takeIdle returns a kept fleet of these planes, resumed and reset, or nil.
func takeIdle(t testing.TB, key string) *idleFleet {
	t.Helper()
	pool.Lock()
	i := slices.IndexFunc(pool.idle, func(f *idleFleet) bool { return f.key == key })
	var f *idleFleet
	if i >= 0 {
		f = pool.idle[i]
		pool.idle = slices.Delete(pool.idle, i, i+1)
	}
	pool.Unlock()
	if f == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	start := time.Now()
	err := f.fleet.Resume()
	if err == nil {
		err = f.fleet.Reset(ctx)
	}
	if err != nil {
		t.Logf("a fleet of the same planes kept by an earlier test could not be reset, starting a fresh one: %v", err)
		f.stop()
		return nil
	}
	t.Logf("a fleet of the same planes kept by an earlier test, reset in %.1fs (logs in %s)", time.Since(start).Seconds(), f.dir)
	return f
}

// pooling reports whether fleets are handed on in this test binary.
func pooling() bool {
	pool.Lock()
	defer pool.Unlock()
	return pool.on
}

// release pauses the fleet of a passing test and keeps it for the next one, stopping the least
// recently used kept fleets beyond maxIdlePlanes.
func release(t testing.TB, f *idleFleet) {
	if err := f.fleet.Pause(); err != nil {
		t.Logf("fleet not kept for the next test: %v", err)
		f.stop()
		return
	}
	pool.Lock()
	if !pool.on {
		pool.Unlock()
		f.stop()
		return
	}
	pool.idle = append(pool.idle, f)
	var evicted []*idleFleet
	for idlePlanes() > maxIdlePlanes {
		evicted = append(evicted, pool.idle[0])
		pool.idle = pool.idle[1:]
	}
	pool.Unlock()
	for _, e := range evicted {
		e.stop()
	}
}

// idlePlanes counts the planes of the kept fleets; the caller holds pool's lock.
func idlePlanes() int {
	n := 0
	for _, f := range pool.idle {
		n += len(f.fleet.Planes())
	}
	return n
}

func (f *idleFleet) stop() {
	f.fleet.Stop()
	_ = os.RemoveAll(f.dir)
}
