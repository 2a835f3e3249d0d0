package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/install"
)

func newInstallCommand(hf *hubFlags) *cobra.Command {
	var controller string
	cmd := &cobra.Command{
		Use:     "install",
		Short:   "Install Flotilla's CustomResourceDefinitions into the hub",
		GroupID: groupOperate,
		Long: `Server-side apply Flotilla's CustomResourceDefinitions to the hub and wait until they are
established, and the ValidatingAdmissionPolicy that lets only the hub controller write
Delivery records (--controller-user, by default the user the hub kubeconfig authenticates as,
for 'flotilla hub' run with the same kubeconfig). Running it again updates them in place. It
installs no controller: run 'flotilla hub', or deploy it with 'kubectl apply -k config/default'
(which installs the CRDs and the policy for the controller's ServiceAccount itself).`,
		Example: `  flotilla install --hub-kubeconfig .flotilla/dev/hub.kubeconfig
  flotilla install --hub-kubeconfig hub.kubeconfig --controller-user system:serviceaccount:flotilla-system:flotilla-hub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hf.restConfig()
			if err != nil {
				return err
			}
			progress := func(line string) { _, _ = fmt.Fprintln(cmd.OutOrStdout(), line) }
			if controller == "" {
				return install.ApplyForSelf(cmd.Context(), cfg, progress)
			}
			return install.Apply(cmd.Context(), cfg, controller, progress)
		},
	}
	cmd.Flags().StringVar(&controller, "controller-user", controller,
		"the user name the hub controller runs as, the only one allowed to write Delivery records (default: the hub kubeconfig's user)")
	return cmd
}
