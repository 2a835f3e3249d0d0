package cli

import (
	"os"

	"github.com/spf13/cobra"
)

// Command groups, by audience.
const (
	groupFleet   = "fleet"
	groupOperate = "operate"
	groupDev     = "dev"
)

// NewRootCommand returns the flotilla command with every subcommand.
func NewRootCommand() *cobra.Command {
	return NewRootCommandFor(Invocation{Name: "flotilla"})
}

// NewRootCommandFor returns the flotilla command named as inv says (as the kubectl plugin,
// help says `kubectl flotilla`). As kubectl's completion helper (kubectl_complete-flotilla), it
// answers completion requests for its arguments.
func NewRootCommandFor(inv Invocation) *cobra.Command {
	root := newRootCommand(&hubFlags{})
	asPlugin(root, inv.Name)
	if inv.Complete {
		root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, os.Args[1:]...))
	}
	return root
}

// newRootCommand returns the flotilla command reaching the hub as hf says (tests set hf.hub).
func newRootCommand(hf *hubFlags) *cobra.Command {
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
	hf.register(root)
	root.AddGroup(
		&cobra.Group{ID: groupFleet, Title: "Fleet (for platform teams):"},
		&cobra.Group{ID: groupOperate, Title: "Hub (for operators of Flotilla):"},
		&cobra.Group{ID: groupDev, Title: "Local development:"},
	)
	root.AddCommand(
		newJoinCommand(hf), newUnjoinCommand(hf), newClusterCommand(hf), newGetCommand(hf), newStatusCommand(hf), newRolloutCommand(hf), newPlanCommand(hf), newDiffCommand(hf), newDashboardCommand(hf),
		newInstallCommand(hf), newUninstallCommand(hf), newHubCommand(hf), newAgentCommand(),
		newDevCommand(), newVersionCommand(),
	)
	addCompletions(root, hf)
	return root
}
