package fleetapis

import (
	"os"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/test/e2e/e2etest"
)

func TestMain(m *testing.M) {
	code := fleettest.Main(m)
	e2etest.RemoveBuilt()
	os.Exit(code)
}

// What the end-to-end packages share (e2etest), under the names test/e2e's tests use too.
var (
	mustKubectl                  = e2etest.MustKubectl
	startFleet, startJoinedFleet = e2etest.StartFleet, e2etest.StartJoinedFleet
	eventuallyKubectl            = e2etest.EventuallyKubectl
	assertAbsent                 = e2etest.AssertAbsent
	writeFile                    = e2etest.WriteFile
)
