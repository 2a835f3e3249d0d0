package fleettest

import (
	"testing"
	"time"
)

// pollInterval is how often Consistently checks, and how soon Eventually checks again at
// first; Eventually waits longer each time after that, up to maxPollInterval: a check is often
// a kubectl process or a list, and a wait of a minute checked ten times a second costs most of
// a core on a 2-core machine.
const (
	pollInterval    = 100 * time.Millisecond
	maxPollInterval = 500 * time.Millisecond
)

// Eventually calls check until it returns nil and fails the test if it still fails after
// timeout, with the last error. It is the only way tests wait: never a bare sleep.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	interval := pollInterval
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		<-time.After(min(interval, max(time.Until(deadline), time.Millisecond)))
		interval = min(interval*3/2, maxPollInterval)
	}
}

// Consistently calls check for the whole duration and fails the test the first time it
// returns an error: it asserts that something does not happen (a write, a change) over an
// observation window.
func Consistently(t testing.TB, duration time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(duration)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		<-ticker.C
	}
	if err := check(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
