package cli

import (
	"github.com/spf13/cobra"
)

// Command groups, by audience.
const (
	groupDev = "dev"
)

// NewRootCommand returns the flotilla command with every subcommand.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "flotilla",
		Short: "Manage a fleet of Kubernetes clusters from one hub",
		Long: `Flotilla places resources defined once on a hub Kubernetes API server onto the right
spoke clusters, keeps them in the desired state, and reports per-cluster status back on the hub.

Start a local hub with three spokes to try it:
  flotilla dev up`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddGroup(&cobra.Group{ID: groupDev, Title: "Local development:"})
	root.AddCommand(newDevCommand(), newVersionCommand())
	return root
}
