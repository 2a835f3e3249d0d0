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
