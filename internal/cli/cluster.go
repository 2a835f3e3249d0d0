package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TaintDecommission is the taint `flotilla cluster drain` puts on a cluster: NoExecute, so
// every placement that does not tolerate it moves away, make before break.
const TaintDecommission = "flotilla.dev/decommission"

// The verbs apply their fields server-side, each as a field manager of its own, so that one
// verb never takes away what another set (and uncordon takes away only what they set).
const (
	cordonManager = "flotilla-cordon"
	drainManager  = "flotilla-drain"
)

func newClusterCommand(hf *hubFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cluster",
		Short:   "Cordon, drain or uncordon a cluster of the fleet",
		GroupID: groupFleet,
		Long: `Take a cluster out of the fleet's placements, or put it back. These commands change
the Cluster object on the hub (what kubectl patch would), and say what that does:

  cordon     the cluster takes no new placements; what runs there stays
  drain      everything placed there moves to other clusters, make before break: copies
             stay until their replacements are Ready elsewhere (a NoExecute taint,
             flotilla.dev/decommission); --wait waits until nothing is placed there
  uncordon   undo both: the cluster takes placements again

A Placement that tolerates the taint keeps the cluster. Nothing on the spoke is deleted
except by those moves.`,
		Example: `  flotilla cluster cordon eu-1
  flotilla cluster drain eu-1 --wait --timeout 15m
  kubectl wait cluster/eu-1 --for=jsonpath='{.status.placements}'=0 --timeout=15m
  flotilla cluster uncordon eu-1`,
	}
	cmd.AddCommand(newCordonCommand(hf), newDrainCommand(hf), newUncordonCommand(hf))
	return requireSubcommand(cmd)
}

func newCordonCommand(hf *hubFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cordon NAME",
		Short: "Keep new placements off a cluster; what runs there stays",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			if err := applyCluster(cmd.Context(), hub, args[0], cordonManager, map[string]any{"unschedulable": true}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "cluster/%s cordoned: spec.unschedulable is true; it takes no new placements, and what runs there stays\n", args[0])
			return err
		},
	}
}

func newUncordonCommand(hf *hubFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "uncordon NAME",
		Short: "Let a cordoned or drained cluster take placements again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := applyCluster(ctx, hub, args[0], cordonManager, map[string]any{"unschedulable": false}); err != nil {
				return err
			}
			// Applying no taints as the drain's manager removes the one drain set.
			if err := applyCluster(ctx, hub, args[0], drainManager, map[string]any{}); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if _, err := fmt.Fprintf(out, "cluster/%s uncordoned: spec.unschedulable is false and the %s taint is removed; placements may choose it again\n",
				args[0], TaintDecommission); err != nil {
				return err
			}
			return sayOtherTaints(ctx, hub, args[0], out)
		},
	}
}

func newDrainCommand(hf *hubFlags) *cobra.Command {
	var waitDone bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain NAME",
		Short: "Move everything placed on a cluster to other clusters, make before break",
		Long: `Put the NoExecute taint flotilla.dev/decommission on a cluster. Every placement that
does not tolerate it chooses other clusters; the objects stay on this one until their
replacements are Ready elsewhere, then are removed from it. With --wait, wait until nothing
is placed there any more (the Cluster's status.placements is 0), printing what is left.

--wait stops at once, with an error naming them, when Placements of owners still on the
cluster have nowhere else to go: one that chooses no cluster now (no other cluster is
eligible), one whose selector is invalid, or one that tolerates the taint. Their objects stay
on the cluster; uncordon it, or give each such Placement another eligible cluster.`,
		Example: `  flotilla cluster drain eu-1 --wait --timeout 15m`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := hf.client()
			if err != nil {
				return err
			}
			ctx, name, out := cmd.Context(), args[0], cmd.OutOrStdout()
			taint := map[string]any{"key": TaintDecommission, "effect": string(flotillav1.TaintEffectNoExecute)}
			if err := applyCluster(ctx, hub, name, drainManager, map[string]any{"taints": []any{taint}}); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(out, "cluster/%s tainted %s:NoExecute: its placements move to other clusters, each copy staying until its replacement is Ready\n",
				name, TaintDecommission); err != nil {
				return err
			}
			if !waitDone {
				_, err := fmt.Fprintf(out, "watch it with: kubectl wait cluster/%s --for=jsonpath='{.status.placements}'=0\n", name)
				return err
			}
			return waitDrained(ctx, hub, name, timeout, out)
		},
	}
	cmd.Flags().BoolVar(&waitDone, "wait", false, "wait until nothing is placed on the cluster any more")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	return cmd
}

// applyCluster server-side applies spec fields to a Cluster as manager. The Cluster must
// exist: a verb never creates one.
func applyCluster(ctx context.Context, hub client.Client, name, manager string, spec map[string]any) error {
	cl := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		return fmt.Errorf("cluster %s: %w (list them with: kubectl get clusters)", name, err)
	}
	// No resourceVersion: the Cluster's status changes often, and these fields are the verb's
	// own. A Cluster deleted meanwhile is not created again: the apply lacks its credentials.
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(flotillav1.GroupVersion.WithKind("Cluster"))
	u.SetName(name)
	if err := hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return fmt.Errorf("change cluster %s: %w", name, err)
	}
	return nil
}

// sayOtherTaints tells of NoExecute or NoSchedule taints left on the cluster that these verbs
// did not set.
func sayOtherTaints(ctx context.Context, hub client.Client, name string, out io.Writer) error {
	cl := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		return err
	}
	for _, t := range cl.Spec.Taints {
		if _, err := fmt.Fprintf(out, "cluster/%s still has the taint %s=%s:%s, set by someone else; remove it with: kubectl edit cluster %s\n",
			name, t.Key, t.Value, t.Effect, name); err != nil {
			return err
		}
	}
	return nil
}
