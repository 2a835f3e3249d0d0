package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestJoinRefusesNamesThatAreNotLabels(t *testing.T) {
	for _, name := range []string{strings.Repeat("a", 64), "eu.west.1", "Bad_Name"} {
		cmd := newJoinCommand(&hubFlags{})
		cmd.SetArgs([]string{name, "--kubeconfig", "/nonexistent/spoke.yaml"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var usage UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "DNS-1123 label") || !strings.Contains(err.Error(), name) {
			t.Errorf("join %q: error = %v; want a usage error stating the rule", name, err)
		}
	}
}
