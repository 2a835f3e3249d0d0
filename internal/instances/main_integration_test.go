package instances_test

import (
	"io"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// logs captures everything the controllers of this test binary log, at debug level: a test
// searches it for canaries.
var logs fleettest.SyncBuffer

func TestMain(m *testing.M) {
	var w io.Writer = &logs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}
