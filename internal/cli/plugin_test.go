package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestInvokedAs(t *testing.T) {
	for arg0, want := range map[string]Invocation{
		"flotilla":                                 {Name: "flotilla"},
		"/work/bin/flotilla":                       {Name: "flotilla"},
		"/usr/local/bin/kubectl-flotilla":          {Name: "kubectl flotilla"},
		"kubectl-flotilla.exe":                     {Name: "kubectl flotilla"},
		"/usr/local/bin/kubectl_complete-flotilla": {Name: "kubectl flotilla", Complete: true},
		"kubectl-fleet_ctl":                        {Name: "kubectl fleet-ctl"},
		"kubectl-":                                 {Name: "flotilla"},
	} {
		if got := InvokedAs(arg0); got != want {
			t.Errorf("InvokedAs(%q) = %+v, want %+v", arg0, got, want)
		}
	}
}

// TestPluginHelp checks that the plugin's help names `kubectl flotilla` in usage and examples,
// and that --kubeconfig reaches the hub as kubectl's does.
func TestPluginHelp(t *testing.T) {
	root := NewRootCommandFor(Invocation{Name: "kubectl flotilla"})
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"plan", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"kubectl flotilla plan ([propagation/]NAME", "  kubectl flotilla plan web -n web-demo", "--kubeconfig string", "--context string"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "\n  flotilla ") {
		t.Errorf("help still says flotilla where kubectl flotilla is meant:\n%s", help)
	}

	for _, flag := range []string{"--kubeconfig", "--hub-kubeconfig"} {
		root := NewRootCommandFor(Invocation{Name: "kubectl flotilla"})
		root.SetArgs([]string{"get", "clusters", flag, "/nonexistent/hub.kubeconfig"})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/hub.kubeconfig does not exist") {
			t.Errorf("%s: error %v does not name the file given", flag, err)
		}
	}
}
