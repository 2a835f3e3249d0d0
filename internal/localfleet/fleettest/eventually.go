package fleettest

import (
	"testing"
	"time"
)

// pollInterval is how often Eventually checks.
const pollInterval = 100 * time.Millisecond

// Eventually calls check until it returns nil and fails the test if it still fails after
// timeout, with the last error. It is the only way tests wait: never a bare sleep.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		<-ticker.C
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
