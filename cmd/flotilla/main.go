// Command flotilla manages a fleet of Kubernetes clusters from one hub.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/flotilla-dev/flotilla/internal/cli"
)

func main() {
	cmd := cli.NewRootCommandFor(cli.InvokedAs(os.Args[0]))
	if err := cmd.Execute(); err != nil {
		code := 1
		var exit cli.ExitError
		if errors.As(err, &exit) {
			// plan and diff --exit-code: 1 says there are changes and prints nothing more.
			if code = exit.Code; exit.Err == nil {
				os.Exit(code)
			}
		}
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		var usage cli.UsageError
		if errors.As(err, &usage) {
			fmt.Fprintf(os.Stderr, "run '%s --help' for usage\n", cmd.DisplayName())
			code = max(code, 2)
		}
		os.Exit(code)
	}
}
