package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCompletionScripts loads the completion scripts the binary prints into their shells (the
// shells installed here), and asks the binary for completions as the scripts do.
func TestCompletionScripts(t *testing.T) {
	flotilla := buildFlotilla(t)
	for shell, check := range map[string]string{
		// bash needs the bash-completion package to complete, not to load the script.
		"bash": `source <("$FLOTILLA" completion bash) && complete -p flotilla`,
		"zsh":  `autoload -U compinit && compinit -u && source <("$FLOTILLA" completion zsh) && echo loaded`,
		"fish": `"$FLOTILLA" completion fish | source; and complete -c flotilla | string match -q '*__complete*'; and echo loaded`,
	} {
		t.Run(shell, func(t *testing.T) {
			path, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed", shell)
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
