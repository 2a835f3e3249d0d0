package e2e

import (
	"os"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestMain hands a passing test's fleet on to the next test that asks for the same planes,
// and removes the flotilla binary the tests built once (buildFlotilla).
func TestMain(m *testing.M) {
	code := fleettest.Main(m)
	removeBuilt()
	os.Exit(code)
}
