package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/propagation"
)

func newPlanCommand(hf *hubFlags) *cobra.Command {
	return planLikeCommand(hf, "plan", "Show what a Propagation would change on each cluster, changing nothing",
		`Compute what delivering a Propagation or ClusterPropagation would do on every cluster its
Placement chooses: which objects would be created, updated (with the fields that change),
pruned, kept, or blocked (and why). Each would-be write is a server-side dry run on the
cluster with Flotilla's field manager, so the cluster's validation and defaults decide the
result. Nothing is changed on the hub or the clusters.

Give a Propagation stored on the hub, or a file with one (-f) to see what applying it would do.
Spoke credentials are read from the hub (Secrets in flotilla-system), so you need read access
to them.`,
		`  flotilla plan web -n web-demo
  flotilla plan -f examples/drift-and-overrides.yaml
  flotilla plan clusterpropagation/backups`, plan.ForCluster, printPlan)
}

func newDiffCommand(hf *hubFlags) *cobra.Command {
	return planLikeCommand(hf, "diff", "Show how each cluster differs from what a Propagation wants now",
		`Compare every object a Propagation or ClusterPropagation delivers with the object on each
cluster: fields changed on the cluster (with the field manager that changed them), objects
missing there, and hub changes not delivered yet (mode ApplyOnce, or still in flight). Only the
fields the desired objects set are compared; defaults and fields of other managers are not
differences. Nothing is changed.`,
		`  flotilla diff web -n web-demo
  flotilla diff clusterpropagation/backups`, plan.DriftOf, printDiff)
}

type planFunc func(context.Context, client.Client, *propagation.Desired, propagation.ClusterDesired) plan.Cluster

func planLikeCommand(hf *hubFlags, use, short, long, example string, compute planFunc, print func(io.Writer, []plan.Cluster) error) *cobra.Command {
	namespace, file := "default", ""
	exit := &exitCodeFlag{}
	print = exit.recording(print)
	cmd := &cobra.Command{
		Use:     use + " ([propagation/]NAME | clusterpropagation/NAME | -f FILE)",
		Short:   short,
		Long:    long,
		Example: example,
		GroupID: groupFleet,
		Args: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == (file != "") {
				return usageError(fmt.Errorf("%s takes one propagation or -f FILE", use))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, err := hf.client()
			if err != nil {
				return err
			}
			var obj client.Object
			if file != "" {
				obj, err = propagatorFromFile(ctx, hub, file)
			} else {
				obj, err = getPropagator(ctx, hub, args[0], scope{namespace: namespace, given: cmd.Flags().Changed("namespace")})
			}
			if err != nil {
				return err
			}
			desired, err := propagation.Preview(ctx, hub, obj, flotillahub.RecordOwners())
			if err != nil {
				return fmt.Errorf("%s: %w", obj.GetName(), err)
			}
			var clusters []plan.Cluster
			for _, cd := range desired.Clusters {
				spoke, err := inventory.SpokeClient(ctx, hub, cd.Cluster, install.Scheme())
				if err != nil {
					clusters = append(clusters, plan.Cluster{Name: cd.Cluster, Err: err})
					continue
				}
				clusters = append(clusters, compute(ctx, spoke, desired, cd))
			}
			if len(clusters) == 0 {
				_, _ = fmt.Fprintln(cmd.OutOrStdout(), "The Placement chooses no cluster: nothing would be delivered.")
				return nil
			}
			return print(cmd.OutOrStdout(), clusters)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the Propagation")
	cmd.Flags().StringVarP(&file, "filename", "f", "", "a file holding the Propagation or ClusterPropagation to plan (other documents in it are skipped)")
	exit.register(cmd)
	return cmd
}

// propagatorFromFile reads the first Propagation or ClusterPropagation of a YAML file. What the
// hub already knows of it (the kinds it delivered) is taken from the hub.
func propagatorFromFile(ctx context.Context, hub client.Client, path string) (client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decoder := serializer.NewCodecFactory(install.Scheme()).UniversalDeserializer()
	for _, doc := range strings.Split(string(data), "\n---") {
		obj, _, err := decoder.Decode([]byte(doc), nil, nil)
		if err != nil {
			continue
		}
		switch p := obj.(type) {
		case *flotillav1.Propagation:
			if p.Namespace == "" {
				p.Namespace = "default"
			}
			stored := &flotillav1.Propagation{}
			if hub.Get(ctx, client.ObjectKeyFromObject(p), stored) == nil {
				p.Status = stored.Status
			}
			return p, nil
		case *flotillav1.ClusterPropagation:
			stored := &flotillav1.ClusterPropagation{}
			if hub.Get(ctx, client.ObjectKeyFromObject(p), stored) == nil {
				p.Status = stored.Status
			}
			return p, nil
		}
	}
	return nil, usageError(fmt.Errorf("%s holds no Propagation or ClusterPropagation", path))
}

func printPlan(w io.Writer, clusters []plan.Cluster) error {
	for _, c := range clusters {
		if c.Err != nil {
			_, _ = fmt.Fprintf(w, "Cluster %s: cannot plan: %v\n\n", c.Name, c.Err)
			continue
		}
		_, _ = fmt.Fprintf(w, "Cluster %s: %d to create, %d to update, %d to prune, %d blocked, %d unchanged\n", c.Name,
			c.Count(plan.Create), c.Count(plan.Update), c.Count(plan.Prune), c.Count(plan.Blocked), c.Count(plan.Unchanged))
		printItems(w, c.Items, map[plan.Action]string{plan.Create: "+", plan.Update: "~", plan.Prune: "-", plan.Blocked: "!", plan.Kept: "=", plan.Unchanged: "="})
	}
	return nil
}

func printDiff(w io.Writer, clusters []plan.Cluster) error {
	for _, c := range clusters {
		if c.Err != nil {
			_, _ = fmt.Fprintf(w, "Cluster %s: cannot compare: %v\n\n", c.Name, c.Err)
			continue
		}
		_, _ = fmt.Fprintf(w, "Cluster %s: %d differ, %d as desired\n", c.Name, c.Count(plan.Drifted), c.Count(plan.Unchanged))
		printItems(w, c.Items, map[plan.Action]string{plan.Drifted: "~", plan.Blocked: "!"})
	}
	return nil
}

// printItems prints the items whose action has a marker, grouped by action.
func printItems(w io.Writer, items []plan.Item, markers map[plan.Action]string) {
	sorted := append([]plan.Item(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Action < sorted[j].Action })
	for _, it := range sorted {
		mark, ok := markers[it.Action]
		if !ok || (it.Action == plan.Unchanged && it.Reason == "") {
			continue
		}
		line := fmt.Sprintf("  %s %s", mark, it.Object)
		if it.Reason != "" {
			line += ": " + it.Reason
		}
		if it.Manager != "" {
			line += " (changed by " + it.Manager + ")"
		}
		_, _ = fmt.Fprintln(w, line)
		// A Secret's values come masked from package plan (plan.Masked), as kubectl diff shows them.
		for _, ch := range it.Changes {
			_, _ = fmt.Fprintf(w, "      %s: %s → %s\n", ch.Path, value(ch.Old), value(ch.New))
		}
	}
	_, _ = fmt.Fprintln(w)
}

// value shows a field's value on one line, bounded.
func value(v any) string {
	if v == nil {
		return "(none)"
	}
	s := strings.ReplaceAll(fmt.Sprintf("%v", v), "\n", "\\n")
	if len(s) > 80 {
		s = s[:79] + "…"
	}
	if str, ok := v.(string); ok && len(str) <= 78 {
		return fmt.Sprintf("%q", str)
	}
	return s
}
