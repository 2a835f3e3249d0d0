package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

func newUninstallCommand(hf *hubFlags) *cobra.Command {
	var dryRun, orphan bool
	cmd := &cobra.Command{
		Use:     "uninstall",
		Short:   "Release the hub objects Flotilla holds, before removing Flotilla",
		GroupID: groupOperate,
		Long: `Refuse while any cluster holds objects Flotilla delivered (its Delivery records say which),
unless --orphan says to leave them there, unmanaged. To remove them instead, delete the
Propagations and remove the flotilla.dev/placement labels while the controller still runs, and
wait until 'flotilla uninstall --dry-run' no longer refuses.

Then remove Flotilla's cleanup finalizer (flotilla.dev/cleanup) from every Propagation,
ClusterPropagation, APIPropagation, kro ResourceGraphDefinition and transparent-mode object
(Deployments, StatefulSets, DaemonSets, Jobs, ConfigMaps and Services) on the hub, so that they
can be deleted without the controller. Other finalizers stay. Nothing on the spokes is touched.

Stop the controller first (it adds the finalizer back to the objects it manages), e.g. with
'kubectl -n flotilla-system scale deployment/flotilla-hub --replicas=0'. It ends by printing
the kubectl command that removes Flotilla's API (its CustomResourceDefinitions, and with them
every Cluster, Placement and Delivery record). kro's ResourceGraphDefinition CRD is not
Flotilla's to remove: RGDs are kro's API. docs/operations.md says how to remove the rest.`,
		Example: `  # What holds delivered objects, and what would be released
  flotilla uninstall --hub-kubeconfig hub.kubeconfig --dry-run

  # Leave every delivered object on its cluster, unmanaged
  kubectl -n flotilla-system scale deployment/flotilla-hub --replicas=0
  flotilla uninstall --hub-kubeconfig hub.kubeconfig --orphan`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if err := refuseHoldings(cmd.Context(), hub, orphan, out); err != nil {
				return err
			}
			kinds := append([]schema.GroupVersionKind{
				flotillav1.GroupVersion.WithKind("Propagation"),
				flotillav1.GroupVersion.WithKind("ClusterPropagation"),
				flotillav1.GroupVersion.WithKind("APIPropagation"),
				kro.GroupVersion.WithKind("ResourceGraphDefinition"),
			}, transparent.Kinds...)
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
	cmd.Flags().BoolVar(&orphan, "orphan", false, "go on while clusters hold delivered objects, and leave them there unmanaged")
	return cmd
}

// refuseHoldings fails, naming what each cluster holds, while any cluster holds delivered
// objects, unless orphan; with orphan it says what is left behind.
func refuseHoldings(ctx context.Context, hub client.Client, orphan bool, out io.Writer) error {
	held, err := install.Holdings(ctx, hub)
	if err != nil || len(held) == 0 {
		return err
	}
	lines := make([]string, 0, len(held))
	for _, h := range held {
		lines = append(lines, fmt.Sprintf("  cluster %s: %d objects of %d owners", h.Cluster, h.Objects, h.Owners))
	}
	if orphan {
		_, err := fmt.Fprintf(out, "leaving delivered objects on %d clusters, unmanaged (--orphan):\n%s\n", len(held), strings.Join(lines, "\n"))
		return err
	}
	return fmt.Errorf("%d clusters hold objects Flotilla delivered:\n%s\n"+
		"to remove them, delete their Propagations (and remove flotilla.dev/placement labels) while the controller runs, and wait; "+
		"to leave them on the clusters unmanaged, pass --orphan", len(held), strings.Join(lines, "\n"))
}
