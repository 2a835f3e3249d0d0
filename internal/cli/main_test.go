package cli

import (
	"io"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// capturedLogs holds what the controllers started by this package's tests log. The logger is
// set here, before any test: controller-runtime drops every log line for good when none is set
// within 30 s of the start, which a long test run before the one reading the logs would pass.
var capturedLogs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	var w io.Writer = &capturedLogs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&capturedLogs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}
