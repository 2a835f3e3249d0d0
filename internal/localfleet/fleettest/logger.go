package fleettest

import (
	"io"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// LogEnv names the environment variable that, when set, sends the logs of controllers that
// tests run in-process to standard error.
const LogEnv = "FLOTILLA_TEST_LOG"

// SetControllerLogger routes controller-runtime's logger for a test binary: discarded unless
// $FLOTILLA_TEST_LOG is set. Call it from TestMain.
func SetControllerLogger() {
	var w io.Writer = io.Discard
	if os.Getenv(LogEnv) != "" {
		w = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
}
