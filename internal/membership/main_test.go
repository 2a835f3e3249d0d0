package membership_test

import (
	"os"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

func TestMain(m *testing.M) {
	fleettest.SetControllerLogger()
	os.Exit(fleettest.Main(m))
}
