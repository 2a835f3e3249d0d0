package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/flotilla-dev/flotilla/internal/logkeys"
)

// --log-format json writes one JSON object a line, with the cluster and owner keys a line
// about them carries; text does not; anything else is refused.
func TestHubLogFormat(t *testing.T) {
	logLine := func(format string) string {
		t.Helper()
		var buf bytes.Buffer
		log, err := hubLogger(format, zap.Options{}, zap.WriteTo(&buf))
		if err != nil {
			t.Fatal(err)
		}
		log.WithValues(logkeys.Cluster, "eu-1", logkeys.Owner, "Propagation/team-a/web").Info("Delivered", "applied", 3)
		return buf.String()
	}

	var line map[string]any
	out := logLine(logFormatJSON)
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatalf("json: %q is not one JSON object: %v", out, err)
	}
	for k, want := range map[string]any{"msg": "Delivered", "cluster": "eu-1", "owner": "Propagation/team-a/web", "applied": 3.0} {
		if line[k] != want {
			t.Errorf("json: %s = %v, want %v (line %s)", k, line[k], want, out)
		}
	}

	out = logLine(logFormatText)
	if json.Valid([]byte(out)) || !strings.Contains(out, "Delivered") || !strings.Contains(out, `"cluster": "eu-1"`) {
		t.Errorf("text: %q", out)
	}

	_, err := run(t, nil, "hub", "--log-format", "yaml")
	wantError(t, err, `--log-format "yaml"`, "json", "text")
}
