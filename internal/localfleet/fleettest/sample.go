package fleettest

import (
	"sync"
	"testing"
	"time"
)

// Low samples a quantity every interval from now until the returned stop, and stop returns the
// lowest value seen: for claims that something never dips (a fleet's available replicas
// during a move). A sample that fails (an unanswered read) is no sample. stop fails the test
// when fewer than minSamples were taken, since a claim over too few samples proves nothing.
func Low(t testing.TB, interval time.Duration, minSamples int, sample func() (int64, error)) (stop func() int64) {
	var (
		mu      sync.Mutex
		lowest  int64
		samples int
	)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			v, err := sample()
			if err != nil {
				continue
			}
			mu.Lock()
			if samples == 0 || v < lowest {
				lowest = v
			}
			samples++
			mu.Unlock()
		}
	}()
	return func() int64 {
		t.Helper()
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		if samples < minSamples {
			t.Fatalf("%d samples, want at least %d", samples, minSamples)
		}
		t.Logf("%d samples; lowest %d", samples, lowest)
		return lowest
	}
}
