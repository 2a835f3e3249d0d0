package e2e

import (
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/test/e2e/e2etest"
)

// binDir is where the Kubernetes binaries are.
func binDir() string { return localfleet.FindBinDir() }

// What the end-to-end packages share (e2etest), under the names this package's tests use.
var (
	kubectl, mustKubectl         = e2etest.Kubectl, e2etest.MustKubectl
	buildFlotilla, removeBuilt   = e2etest.BuildFlotilla, e2etest.RemoveBuilt
	runFlotilla, runFlotillaHub  = e2etest.RunFlotilla, e2etest.RunFlotillaHub
	startFleet, startJoinedFleet = e2etest.StartFleet, e2etest.StartJoinedFleet
	standardPlanes               = e2etest.StandardPlanes
	eventuallyKubectl            = e2etest.EventuallyKubectl
	assertAbsent                 = e2etest.AssertAbsent
	writeFile                    = e2etest.WriteFile
)
