package hub

import (
	"strings"
	"testing"
)

// TestWorkEndpointRefusesPlainHTTPAwayFromLoopback: its responses carry Secret data, so
// without a certificate the endpoint listens on a loopback address only, and a certificate
// needs its key.
func TestWorkEndpointRefusesPlainHTTPAwayFromLoopback(t *testing.T) {
	for _, c := range []struct {
		opts    Options
		refused string
	}{
		{Options{WorkAddr: ":8443"}, "loopback"},
		{Options{WorkAddr: "0.0.0.0:8443"}, "loopback"},
		{Options{WorkAddr: ":8443", WorkCertFile: "tls.crt"}, "both"},
		{Options{WorkAddr: ":8443", WorkKeyFile: "tls.key"}, "both"},
	} {
		_, err := serveWork(nil, nil, nil, nil, nil, nil, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.refused) {
			t.Errorf("%+v: %v, want a refusal saying %q", c.opts, err, c.refused)
		}
	}
	for _, off := range []string{"", "0"} {
		if _, err := serveWork(nil, nil, nil, nil, nil, nil, Options{WorkAddr: off}); err != nil {
			t.Errorf("work endpoint off (%q): %v", off, err)
		}
	}
}
