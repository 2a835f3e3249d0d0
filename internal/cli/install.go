package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/install"
)

func newInstallCommand(hf *hubFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "install",
		Short:   "Install Flotilla's CustomResourceDefinitions into the hub",
		GroupID: groupOperate,
		Long: `Server-side apply Flotilla's CustomResourceDefinitions to the hub and wait until they are
established. Running it again updates them in place. It installs no controller: run
'flotilla hub', or deploy it with 'kubectl apply -k config/default'.`,
		Example: `  flotilla install --hub-kubeconfig .flotilla/dev/hub.kubeconfig`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hf.restConfig()
			if err != nil {
				return err
			}
			return install.Apply(cmd.Context(), cfg, func(line string) {
				_, _ = fmt.Fprintln(cmd.OutOrStdout(), line)
			})
		},
	}
}
