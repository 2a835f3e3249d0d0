package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

func newUninstallCommand(hf *hubFlags) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "uninstall",
		Short:   "Release the hub objects Flotilla holds, before removing Flotilla",
		GroupID: groupOperate,
		Long: `Remove Flotilla's cleanup finalizer (flotilla.dev/cleanup) from every Propagation,
ClusterPropagation, APIPropagation, kro ResourceGraphDefinition and transparent-mode object
(Deployments, StatefulSets, DaemonSets, Jobs, ConfigMaps and Services) on the hub, so that they
can be deleted without the controller. Other finalizers stay. Nothing on the spokes is touched: what Flotilla delivered stays there,
unmanaged.

Stop the controller first (it adds the finalizer back to the objects it manages). To remove
what was delivered instead of leaving it, delete the Propagations and remove the
flotilla.dev/placement labels while the controller still runs, and wait for them to go.
It ends by printing the kubectl command that removes Flotilla's API (its
CustomResourceDefinitions, and with them every Cluster, Placement and Delivery record). kro's
ResourceGraphDefinition CRD is not Flotilla's to remove: RGDs are kro's API.`,
		Example: `  flotilla uninstall --hub-kubeconfig hub.kubeconfig --dry-run
  flotilla uninstall --hub-kubeconfig hub.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			kinds := append([]schema.GroupVersionKind{
				flotillav1.GroupVersion.WithKind("Propagation"),
				flotillav1.GroupVersion.WithKind("ClusterPropagation"),
				flotillav1.GroupVersion.WithKind("APIPropagation"),
				kro.GroupVersion.WithKind("ResourceGraphDefinition"),
			}, transparent.Kinds...)
			out := cmd.OutOrStdout()
			n, err := install.Release(cmd.Context(), hub, kinds, dryRun, func(line string) { _, _ = fmt.Fprintln(out, line) })
			if err != nil {
				return err
			}
			verb := "released"
			if dryRun {
				verb = "would release"
			}
			_, _ = fmt.Fprintf(out, "%s %d objects; objects on the spokes are left as they are\n", verb, n)
			crds, err := install.CRDs()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(crds))
			for _, c := range crds {
				names = append(names, c.Name)
			}
			_, err = fmt.Fprintf(out, "to remove Flotilla's API next: kubectl delete crd %s\n", strings.Join(names, " "))
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be released, change nothing")
	return cmd
}
