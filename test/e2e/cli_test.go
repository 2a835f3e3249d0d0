package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestCompletionScripts loads the bash completion script the binary prints into bash (zsh's and
// fish's come from the same generator; a fresh machine has neither shell), and asks the binary
// for completions as the script does.
func TestCompletionScripts(t *testing.T) {
	flotilla := buildFlotilla(t)
	for shell, check := range map[string]string{
		// bash needs the bash-completion package to complete, not to load the script.
		"bash": `source <("$FLOTILLA" completion bash) && complete -p flotilla`,
	} {
		t.Run(shell, func(t *testing.T) {
			path, err := exec.LookPath(shell)
			if err != nil {
				t.Fatalf("%s: %v", shell, err)
			}
			cmd := exec.Command(path, "-c", check)
			cmd.Env = append(cmd.Environ(), "FLOTILLA="+flotilla)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "error") {
				t.Fatalf("%s could not load `flotilla completion %s`: %v\n%s", shell, shell, err, out)
			}
			if shell == "bash" && !strings.Contains(string(out), "__start_flotilla") {
				t.Fatalf("bash has no completion for flotilla:\n%s", out)
			}
		})
	}

	// What the scripts run on TAB: subcommands complete without a hub; names of clusters
	// complete to nothing (and no file names) when there is no hub to read them from.
	for args, want := range map[string]string{
		"cl":                  "cluster\t",
		"cluster cordon spo":  ":4\n",
		"plan --exit-code we": ":4\n",
	} {
		cmd := exec.Command(flotilla, append([]string{"__complete"}, strings.Split(args, " ")...)...)
		cmd.Env = append(cmd.Environ(), "KUBECONFIG="+t.TempDir()+"/none")
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("flotilla %s<TAB>: %v, want %q in\n%s", args, err, want, out)
		}
	}
}

// TestKubectlPlugin installs the binary as kubectl-flotilla (and kubectl's completion helper
// kubectl_complete-flotilla) on PATH and runs it through the real kubectl.
func TestKubectlPlugin(t *testing.T) {
	flotilla := buildFlotilla(t)
	kubectlBin := fleettest.KubectlPath(t)
	dir := t.TempDir()
	for _, name := range []string{"kubectl-flotilla", "kubectl_complete-flotilla"} {
		if err := os.Symlink(flotilla, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(kubectlBin, args...)
		cmd.Env = append(cmd.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"KUBECONFIG="+filepath.Join(dir, "none"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := run("plugin", "list"); err != nil || !strings.Contains(out, filepath.Join(dir, "kubectl-flotilla")) {
		t.Errorf("kubectl plugin list: %v\n%s", err, out)
	}
	if out, err := run("flotilla", "version"); err != nil || !strings.HasPrefix(out, "flotilla ") {
		t.Errorf("kubectl flotilla version: %v\n%s", err, out)
	}
	out, err := run("flotilla", "--help")
	if err != nil || !strings.Contains(out, "kubectl flotilla [command]") || !strings.Contains(out, "--kubeconfig string") {
		t.Errorf("kubectl flotilla --help does not say kubectl flotilla, or has no --kubeconfig: %v\n%s", err, out)
	}
	// A usage error points to the plugin's help; --kubeconfig is the hub's, as in kubectl.
	out, err = run("flotilla", "plan")
	if code := exitCode(err); code != 2 || !strings.Contains(out, "run 'kubectl flotilla --help' for usage") {
		t.Errorf("kubectl flotilla plan: exit %d, want 2 and a pointer to kubectl flotilla --help\n%s", code, out)
	}
	out, err = run("flotilla", "get", "clusters", "--kubeconfig", filepath.Join(dir, "hub.yaml"))
	if exitCode(err) != 1 || !strings.Contains(out, filepath.Join(dir, "hub.yaml")+" does not exist") {
		t.Errorf("kubectl flotilla get clusters --kubeconfig: %v\n%s", err, out)
	}
	// kubectl completes the plugin's arguments through kubectl_complete-flotilla.
	if out, err := run("__complete", "flotilla", "cl"); err != nil || !strings.Contains(out, "cluster") {
		t.Errorf("kubectl flotilla cl<TAB>: %v\n%s", err, out)
	}
}

func exitCode(err error) int {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
