//go:build uitest

package ui

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/test/e2e/e2etest"
)

// TestMain removes the flotilla binary the test built (e2etest.BuildFlotilla).
func TestMain(m *testing.M) {
	code := m.Run()
	e2etest.RemoveBuilt()
	os.Exit(code)
}

// dashboardURL waits for a process's output to name the dashboard's URL, and returns its base
// (scheme, host and port) and the URL as printed (the local dashboard's carries its key).
func dashboardURL(t *testing.T, output func() string) (base, printed string) {
	t.Helper()
	re := regexp.MustCompile(`dashboard: (?:serving )?((http://127\.0\.0\.1:[0-9]+)/(?:\?key=[A-Za-z0-9_-]+)?)`)
	fleettest.Eventually(t, time.Minute, "the dashboard serves", func() error {
		m := re.FindStringSubmatch(output())
		if m == nil {
			return fmt.Errorf("no URL yet in:\n%s", output())
		}
		printed, base = m[1], m[2]
		return nil
	})
	return base, printed
}
