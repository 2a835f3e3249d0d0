package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func newStatusCommand(hf *hubFlags) *cobra.Command {
	namespace := "default"
	var output string
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:     "status [propagation/]NAME | clusterpropagation/NAME | placement/NAME | rgd/NAME | apipropagation/NAME",
		Short:   "Show where a Propagation is delivered, what a Placement decided, or where an API is served, cluster by cluster",
		GroupID: groupFleet,
		Long: `Show a Propagation's or ClusterPropagation's conditions and one line per cluster: the
revision delivered, how many objects are applied and ready, and what failed.

For a Placement, show one line per chosen cluster: its tier, its state (Active, FailedOver,
Returning) and since when, the cluster it stands in for (clusterCount), and the replicas each
divided workload of the Placement's owners runs there.

For a kro ResourceGraphDefinition (rgd/NAME), show the APIPropagation serving it, how its
instances in the fleet are doing (by kro state, the first ones not ready named), and one line
per cluster: the phase of its API there (Serving, CompileFailed, Blocked, ...), the RGD
generation served there, the instances there by state, and why it is not serving. For an
APIPropagation (apipropagation/NAME or fapi/NAME), the same for every API it chooses.

With -A, show the Propagations or Placements of that name in every namespace. With -o, print
the object the status is read from instead (for rgd/NAME, the APIPropagation serving it; a
Placement's replicas are read from its owners' Delivery records: kubectl get deliveries).`,
		Example: `  flotilla status web -n web-demo
  flotilla status web -A
  flotilla status web -n web-demo -o yaml
  flotilla status clusterpropagation/backups
  flotilla status placement/weighted -n web-demo
  flotilla status rgd/webservice.kro.run
  flotilla status fapi/public-apis`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("status takes one object (propagation/NAME, placement/NAME, rgd/NAME, ...), got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := objectPrinter(output)
			if err != nil {
				return err
			}
			if p == nil && output != "" {
				return usageError(fmt.Errorf("--output %q: want %s", output, objectOutputs))
			}
			kind, name, err := statusKind(args[0])
			if err != nil {
				return err
			}
			hub, err := hf.client()
			if err != nil {
				return err
			}
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			if kind == kindRGD {
				served, api, err := servingAPIPropagation(ctx, hub, name)
				if err != nil {
					return err
				}
				if p != nil {
					return printObjects(w, p, true, served)
				}
				return printServedAPI(w, served, api)
			}
			where := scope{namespace: namespace, given: cmd.Flags().Changed("namespace"), all: allNamespaces}
			objs, err := statusObjects(ctx, hub, kind, name, where)
			if err != nil {
				return err
			}
			if p != nil {
				return printObjects(w, p, !where.all || !kind.namespaced(), objs...)
			}
			for i, obj := range objs {
				if i > 0 {
					_, _ = fmt.Fprintln(w)
				}
				if err := printStatus(ctx, w, hub, obj); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&namespace, "namespace", "n", namespace, "namespace of the Propagation or Placement (RGDs and APIPropagations are cluster-scoped)")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "show the Propagations or Placements of that name in every namespace")
	f.StringVarP(&output, "output", "o", "", "print the object the status is read from instead: "+objectOutputs)
	return cmd
}

// printStatus prints the status of an object statusObjects read.
func printStatus(ctx context.Context, w io.Writer, hub client.Client, obj client.Object) error {
	switch o := obj.(type) {
	case *flotillav1.Propagation:
		return printPropagationStatus(w, fmt.Sprintf("Propagation %s/%s", o.Namespace, o.Name), o.Status)
	case *flotillav1.ClusterPropagation:
		return printPropagationStatus(w, "ClusterPropagation "+o.Name, o.Status)
	case *flotillav1.Placement:
		return printPlacementStatus(ctx, w, hub, o, time.Now())
	case *flotillav1.APIPropagation:
		return printAPIPropagationStatus(w, o)
	}
	return fmt.Errorf("no status for %T", obj)
}

// printPropagationStatus prints the conditions and the per-cluster table.
func printPropagationStatus(w io.Writer, title string, s flotillav1.PropagationStatus) error {
	_, _ = fmt.Fprintf(w, "%s: %d objects, %d clusters chosen, %d applied, %d ready, %d failed\n",
		title, s.SelectedObjects, s.TargetClusters, s.AppliedClusters, s.ReadyClusters, s.FailedClusters)
	for _, t := range []string{flotillav1.PropagationApplied, flotillav1.PropagationReady, flotillav1.PropagationReplicasPlaced} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			_, _ = fmt.Fprintf(w, "  %-8s %-6s %s: %s\n", t, c.Status, c.Reason, c.Message)
		}
	}
	if len(s.ClusterResults) == 0 {
		_, err := fmt.Fprintln(w, "No cluster results yet.")
		return err
	}
	_, _ = fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	_, _ = fmt.Fprintln(tw, "CLUSTER\tREVISION\tAPPLIED\tREADY\tFAILED\tMESSAGE")
	for _, r := range s.ClusterResults {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", r.Cluster, orNone(r.Revision), r.Applied, r.Ready, r.Failed, r.Message)
	}
	return tw.Flush()
}
