package e2e

import (
	"os"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestMain hands a passing test's fleet on to the next test that asks for the same planes.
func TestMain(m *testing.M) {
	os.Exit(fleettest.Main(m))
}
