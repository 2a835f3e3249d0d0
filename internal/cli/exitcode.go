package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/plan"
)

// Exit statuses of plan and diff with --exit-code, as kubectl diff has them.
const (
	exitNoChanges = 0
	exitChanges   = 1
	exitFailed    = 2
)

// ExitError asks main to exit with Code. Err, when set, is printed first; a bare ExitError
// (plan --exit-code finding changes) prints nothing more than the command already did.
type ExitError struct {
	Code int
	Err  error
}

func (e ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e ExitError) Unwrap() error { return e.Err }

// exitCodeFlag is plan's and diff's --exit-code: it records the clusters the command prints and
// turns them into the exit status once the command has run.
type exitCodeFlag struct {
	enabled  bool
	clusters []plan.Cluster
}

// recording returns print, also keeping the clusters it prints.
func (e *exitCodeFlag) recording(print func(io.Writer, []plan.Cluster) error) func(io.Writer, []plan.Cluster) error {
	return func(w io.Writer, clusters []plan.Cluster) error {
		e.clusters = append(e.clusters, clusters...)
		return print(w, clusters)
	}
}

// register adds --exit-code to cmd and wraps its RunE to exit as the flag says.
func (e *exitCodeFlag) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&e.enabled, "exit-code", false,
		"exit 1 when anything would change, differs or is blocked, 0 when nothing would, 2 or more on an error (as kubectl diff)")
	cmd.Example += fmt.Sprintf("\n  flotilla %s web -n web-demo --exit-code   # in CI: 0 nothing to do, 1 changes, 2 failed", cmd.Name())
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		e.clusters = nil
		err := run(c, args)
		if !e.enabled {
			return err
		}
		if err != nil {
			return ExitError{Code: exitFailed, Err: err}
		}
		return exitStatus(e.clusters)
	}
}

// exitStatus decides the exit status of plan or diff from the clusters it printed: an error when
// a cluster could not be planned (the answer is incomplete), else changes when any object would
// be created, updated or pruned, differs (drifted), or is blocked, else none. Unchanged objects
// and objects kept rather than pruned are no change.
func exitStatus(clusters []plan.Cluster) error {
	failed, changed := 0, false
	for _, c := range clusters {
		if c.Err != nil {
			failed++
			continue
		}
		for _, it := range c.Items {
			if it.Action != plan.Unchanged && it.Action != plan.Kept {
				changed = true
			}
		}
	}
	switch {
	case failed > 0:
		return ExitError{Code: exitFailed, Err: fmt.Errorf("%d of %d clusters could not be read (see above); fix their connection or credentials (flotilla get clusters) and run again", failed, len(clusters))}
	case changed:
		return ExitError{Code: exitChanges}
	}
	return nil
}
