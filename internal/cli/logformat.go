package cli

import (
	"fmt"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Log formats of `flotilla hub --log-format`.
const (
	logFormatJSON = "json"
	logFormatText = "text"
)

// hubLogger builds the hub controller's logger from controller-runtime's zap options (the
// --zap-* flags) and --log-format, which chooses the encoder: json, one object a line with the
// keys cluster and owner where a line is about one (package logkeys), or text for people. An
// empty format leaves the encoder to the zap flags (JSON unless --zap-devel).
func hubLogger(format string, opts zap.Options, extra ...zap.Opts) (logr.Logger, error) {
	switch format {
	case "":
	case logFormatJSON:
		zap.JSONEncoder()(&opts)
	case logFormatText:
		zap.ConsoleEncoder()(&opts)
	default:
		return logr.Logger{}, fmt.Errorf("--log-format %q: use %s or %s", format, logFormatJSON, logFormatText)
	}
	return zap.New(append([]zap.Opts{zap.UseFlagOptions(&opts)}, extra...)...), nil
}
