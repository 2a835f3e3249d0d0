// Command render writes the embedded chart's render with default values, as `helm template`
// prints it, to a file: `make generate` writes the kustomize base config/default with it, and a
// chart release keeps its render for the upgrade test with -release (docs/operations.md,
// "Upgrade").
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flotilla-dev/flotilla/internal/install/chart"
)

func main() {
	out := flag.String("o", "", "file to write")
	release := flag.Bool("release", false, "head the file as a released version's render, kept to test upgrades from it")
	flag.Parse()
	if err := run(*out, *release); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(out string, release bool) error {
	if out == "" {
		return fmt.Errorf("-o FILE is required")
	}
	c, err := chart.Load()
	if err != nil {
		return err
	}
	r, err := chart.Render(c, chart.Options{})
	if err != nil {
		return err
	}
	header := chart.GeneratedHeader
	if release {
		header = fmt.Sprintf("# charts/flotilla %s rendered with its default values: the hub an upgrade starts from.\n", c.Metadata.Version)
	}
	return os.WriteFile(out, []byte(header+r.Manifest), 0o644)
}
