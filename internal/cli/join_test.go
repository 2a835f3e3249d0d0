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

func TestJoinRefusesBadRoleAndLifetime(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-lifetime", "8760h"}, "--token-lifetime: token lifetime 8760h0m0s is out of bounds"},
		{[]string{"--token-lifetime", "5m"}, "between 10m0s (the API server's minimum) and 168h0m0s"},
		{[]string{"--role", "a/b"}, `--role "a/b" is not a valid ClusterRole name`},
		{[]string{"--api-groups", "*"}, `--api-groups: API group "*" cannot be granted whole`},
	} {
		cmd := newJoinCommand(&hubFlags{})
		cmd.SetArgs(append([]string{"eu-1", "--kubeconfig", "/nonexistent/spoke.yaml"}, tt.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var usage UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("join %v: error = %v; want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestJoinHelpExplainsTheGrant(t *testing.T) {
	long := newJoinCommand(&hubFlags{}).Long
	for _, want := range []string{"flotilla-delivery", "escalate", "--role", "--token-lifetime", "renews", "revokes", "forbidden by", "serviceaccounts/token", "pods/exec", "--api-groups", "flotilla-ns-NAMESPACE"} {
		if !strings.Contains(long, want) {
			t.Errorf("`flotilla join --help` does not mention %q", want)
		}
	}
}

// TestJoinPullFlags: pull mode takes no grant flags and needs --agent-kubeconfig or --kubeconfig
// (not both); push mode
// takes no pull flags; the agent needs exactly one hub credential. Each is a usage error before
// the hub is reached.
func TestJoinPullFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "pull"}, "--mode pull needs one of --agent-kubeconfig FILE"},
		{[]string{"--mode", "pull", "--agent-kubeconfig", "a", "--kubeconfig", "s"}, "--mode pull needs one of --agent-kubeconfig FILE"},
		{[]string{"--mode", "pull", "--agent-kubeconfig", "a", "--role", "r"}, "--role is for --mode push only"},
		{[]string{"--mode", "pull", "--agent-kubeconfig", "a", "--hub-server", "hub:6443"}, "--hub-server \"hub:6443\""},
		{[]string{"--mode", "pull", "--agent-kubeconfig", "a", "--token-lifetime", "5m"}, "--token-lifetime"},
		{[]string{"--mode", "sideways"}, `--mode "sideways": want push or pull`},
		{[]string{"--kubeconfig", "s", "--agent-kubeconfig", "a"}, "--agent-kubeconfig is for --mode pull only"},
	} {
		cmd := newJoinCommand(&hubFlags{})
		cmd.SetArgs(append([]string{"edge"}, tt.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var usage UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("join %v: error = %v; want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	for _, args := range [][]string{
		{"--cluster", "edge", "--hub-work-url", "https://hub:9443"},
		{"--cluster", "edge", "--hub-work-url", "https://hub:9443", "--token-file", "t", "--hub-kubeconfig", "k"},
	} {
		cmd := newAgentCommand()
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var usage UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "one of --hub-kubeconfig") {
			t.Errorf("agent %v: error = %v; want a usage error asking for one credential", args, err)
		}
	}
}
