// Command flotilla manages a fleet of Kubernetes clusters from one hub.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/flotilla-dev/flotilla/internal/cli"
)

func main() {
	cmd := cli.NewRootCommand()
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		var usage cli.UsageError
		if errors.As(err, &usage) {
			fmt.Fprintln(os.Stderr, "run 'flotilla --help' for usage")
			os.Exit(2)
		}
		os.Exit(1)
	}
}
