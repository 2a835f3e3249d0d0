package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/install"
)

func newInstallCommand(hf *hubFlags) *cobra.Command {
	var controllers []string
	cmd := &cobra.Command{
		Use:     "install",
		Short:   "Install Flotilla's CustomResourceDefinitions into the hub",
		GroupID: groupOperate,
		Long: `Server-side apply Flotilla's CustomResourceDefinitions to the hub and wait until they are
established, and the ValidatingAdmissionPolicy that lets only the hub controller write
Delivery records: the users --controller-user names, by default the two ways the controller
runs, as the ServiceAccount 'kubectl apply -k config/default' deploys
(` + install.DefaultController + `) and as the user the hub kubeconfig
authenticates as ('flotilla hub' run with the same kubeconfig). Running it again updates them
in place. It installs no controller: run 'flotilla hub', or deploy it with
'kubectl apply -k config/default'.`,
		Example: `  flotilla install --hub-kubeconfig .flotilla/dev/hub.kubeconfig
  flotilla install --hub-kubeconfig hub.kubeconfig --controller-user ` + install.DefaultController,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hf.restConfig()
			if err != nil {
				return err
			}
			if len(controllers) == 0 {
				self, err := install.Whoami(cmd.Context(), cfg)
				if err != nil {
					return err
				}
				controllers = []string{install.DefaultController, self}
			}
			return install.Apply(cmd.Context(), cfg, controllers, func(line string) {
				_, _ = fmt.Fprintln(cmd.OutOrStdout(), line)
			})
		},
	}
	cmd.Flags().StringSliceVar(&controllers, "controller-user", nil,
		"a user name the hub controller runs as; only these may write Delivery records (default: "+install.DefaultController+" and the hub kubeconfig's user)")
	return cmd
}
