package cli

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/plan"
)

func TestExitStatus(t *testing.T) {
	items := func(actions ...plan.Action) []plan.Item {
		var out []plan.Item
		for _, a := range actions {
			out = append(out, plan.Item{Action: a, Object: "configmap shop/" + string(a)})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		clusters []plan.Cluster
		want     int
	}{
		{"no cluster", nil, exitNoChanges},
		{"all unchanged or kept", []plan.Cluster{{Name: "a", Items: items(plan.Unchanged, plan.Kept)}, {Name: "b"}}, exitNoChanges},
		{"create", []plan.Cluster{{Name: "a", Items: items(plan.Unchanged)}, {Name: "b", Items: items(plan.Create)}}, exitChanges},
		{"update", []plan.Cluster{{Name: "a", Items: items(plan.Update)}}, exitChanges},
		{"prune", []plan.Cluster{{Name: "a", Items: items(plan.Prune)}}, exitChanges},
		{"blocked", []plan.Cluster{{Name: "a", Items: items(plan.Blocked)}}, exitChanges},
		{"drifted", []plan.Cluster{{Name: "a", Items: items(plan.Drifted)}}, exitChanges},
		{"a cluster not read wins over changes", []plan.Cluster{{Name: "a", Items: items(plan.Create)}, {Name: "b", Err: errors.New("unreachable")}}, exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := codeOf(exitStatus(tc.clusters)); got != tc.want {
				t.Errorf("exit status = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestExitCodeFlag runs a plan-like command whose work prints the given clusters or fails, with
// and without --exit-code.
func TestExitCodeFlag(t *testing.T) {
	changed := []plan.Cluster{{Name: "a", Items: []plan.Item{{Action: plan.Update, Object: "configmap shop/x"}}}}
	unchanged := []plan.Cluster{{Name: "a", Items: []plan.Item{{Action: plan.Unchanged, Object: "configmap shop/x"}}}}
	for _, tc := range []struct {
		name     string
		args     []string
		clusters []plan.Cluster
		fail     error
		want     int
	}{
		{"changes without the flag", nil, changed, nil, 0},
		{"changes", []string{"--exit-code"}, changed, nil, exitChanges},
		{"no changes", []string{"--exit-code"}, unchanged, nil, exitNoChanges},
		{"failure without the flag", nil, nil, errors.New("no hub"), 1},
		{"failure", []string{"--exit-code"}, nil, errors.New("no hub"), exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exit := &exitCodeFlag{}
			print := exit.recording(func(w io.Writer, clusters []plan.Cluster) error {
				_, err := io.WriteString(w, "printed\n")
				return err
			})
			cmd := &cobra.Command{Use: "plan", SilenceErrors: true, SilenceUsage: true, RunE: func(cmd *cobra.Command, _ []string) error {
				if tc.fail != nil {
					return tc.fail
				}
				return print(cmd.OutOrStdout(), tc.clusters)
			}}
			exit.register(cmd)
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if got := codeOf(err); got != tc.want {
				t.Errorf("exit status = %d (%v), want %d", got, err, tc.want)
			}
			if tc.fail != nil && !errors.Is(err, tc.fail) {
				t.Errorf("error %v does not carry %v", err, tc.fail)
			}
			if tc.fail == nil && out.String() != "printed\n" {
				t.Errorf("output = %q", out.String())
			}
		})
	}
}

// codeOf is the exit status main gives an error.
func codeOf(err error) int {
	var exit ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	}
	return 1
}

func TestPlanAndDiffHaveExitCode(t *testing.T) {
	root := NewRootCommand()
	for _, name := range []string{"plan", "diff"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Flags().Lookup("exit-code") == nil {
			t.Errorf("%s has no --exit-code", name)
		}
	}
}
