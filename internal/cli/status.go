package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func newStatusCommand(hf *hubFlags) *cobra.Command {
	namespace := "default"
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
APIPropagation (apipropagation/NAME or fapi/NAME), the same for every API it chooses.`,
		Example: `  flotilla status web -n web-demo
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
			hub, err := hf.client()
			if err != nil {
				return err
			}
			kind, name, _ := strings.Cut(args[0], "/")
			switch {
			case isRGDKind(kind):
				return printRGDStatus(cmd.Context(), cmd.OutOrStdout(), hub, name)
			case isAPIPropagationKind(kind):
				p := &flotillav1.APIPropagation{}
				if err := hub.Get(cmd.Context(), client.ObjectKey{Name: name}, p); err != nil {
					return fmt.Errorf("apipropagation %s: %w", name, err)
				}
				return printAPIPropagationStatus(cmd.OutOrStdout(), p)
			case isPlacementKind(kind):
				p := &flotillav1.Placement{}
				if err := hub.Get(cmd.Context(), client.ObjectKey{Namespace: namespace, Name: name}, p); err != nil {
					return fmt.Errorf("placement %s/%s: %w", namespace, name, err)
				}
				return printPlacementStatus(cmd.Context(), cmd.OutOrStdout(), hub, p, time.Now())
			}
			obj, err := getPropagator(cmd.Context(), hub, args[0], namespace)
			if err != nil {
				return err
			}
			var (
				title  string
				status flotillav1.PropagationStatus
			)
			switch p := obj.(type) {
			case *flotillav1.Propagation:
				title, status = fmt.Sprintf("Propagation %s/%s", p.Namespace, p.Name), p.Status
			case *flotillav1.ClusterPropagation:
				title, status = "ClusterPropagation "+p.Name, p.Status
			}
			return printPropagationStatus(cmd.OutOrStdout(), title, status)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the Propagation or Placement (RGDs and APIPropagations are cluster-scoped)")
	return cmd
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

// getPropagator reads the Propagation ([propagation/]NAME in namespace) or ClusterPropagation
// (clusterpropagation/NAME) an argument names.
func getPropagator(ctx context.Context, hub client.Client, arg, namespace string) (client.Object, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		kind, name = "propagation", arg
	}
	switch strings.ToLower(kind) {
	case "propagation", "propagations", "fprop":
		p := &flotillav1.Propagation{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p); err != nil {
			return nil, fmt.Errorf("propagation %s/%s: %w", namespace, name, err)
		}
		return p, nil
	case "clusterpropagation", "clusterpropagations", "fcprop":
		p := &flotillav1.ClusterPropagation{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			return nil, fmt.Errorf("clusterpropagation %s: %w", name, err)
		}
		return p, nil
	}
	return nil, usageError(fmt.Errorf("%q: want propagation/NAME, clusterpropagation/NAME, placement/NAME, rgd/NAME or apipropagation/NAME", arg))
}

// isPlacementKind reports whether a kind written on the command line names Placements.
func isPlacementKind(kind string) bool {
	switch strings.ToLower(kind) {
	case "placement", "placements", "fpl":
		return true
	}
	return false
}
