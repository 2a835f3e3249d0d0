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
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/plan"
	"github.com/flotilla-dev/flotilla/internal/propagation"
)

func newPlanCommand(hf *hubFlags) *cobra.Command {
	return planLikeCommand(hf, "plan", "Show what delivering an owner would change on each cluster, changing nothing",
		`Compute what delivering an owner would do on every cluster its Placement chooses: which
objects would be created, updated (with the fields that change), pruned, kept, or blocked (and
why). Each would-be write is a server-side dry run on the cluster with Flotilla's field manager,
so the cluster's validation and defaults decide the result. Nothing is changed on the hub or the
clusters.

What each cluster gets is computed with the controller's own steps: the revision
spec.revisionPins pins the cluster to (else the latest), its share of the replicas the Placement
divides (where the division ends, not the replicas a move holds on the way), and the override
rules. The holds the controller would apply across the fleet (a missing or lagging Placement,
one that now chooses no cluster, a removal from more clusters than the prune budget allows) are
printed first, each saying what ends it (the command that confirms a removal, ready to paste).

The owner is one of:
  [propagation/]NAME, clusterpropagation/NAME   a Propagation or ClusterPropagation; -f FILE
                                                plans one not applied yet
  KIND/NAME                                     a transparent-mode object labelled
                                                flotilla.dev/placement (deployment, statefulset,
                                                daemonset, job, configmap, service, hpa)
  rgd/NAME, apipropagation/NAME                 the CRD an RGD is served as on each cluster,
                                                compiled against that cluster's schemas (every
                                                RGD the APIPropagation serves)

Spoke credentials are read from the hub (Secrets in flotilla-system), so you need read access
to them.`,
		`  flotilla plan web -n web-demo
  flotilla plan -f examples/drift-and-overrides.yaml
  flotilla plan clusterpropagation/backups
  flotilla plan deployment/cart -n shop
  flotilla plan apipropagation/platform`, plan.ForCluster, printPlan)
}

func newDiffCommand(hf *hubFlags) *cobra.Command {
	return planLikeCommand(hf, "diff", "Show how each cluster differs from what an owner wants now",
		`Compare every object an owner delivers with the object on each cluster: fields changed on
the cluster (with the field manager that changed them), objects missing there, and hub changes
not delivered yet (mode ApplyOnce, or still in flight). Only the fields the desired objects set
are compared; defaults and fields of other managers are not differences. Nothing is changed.

The owner is named as for flotilla plan: a Propagation or ClusterPropagation, a
transparent-mode object (deployment/NAME, ...), rgd/NAME or apipropagation/NAME.`,
		`  flotilla diff web -n web-demo
  flotilla diff clusterpropagation/backups
  flotilla diff deployment/cart -n shop`, plan.DriftOf, printDiff)
}

type planFunc func(context.Context, client.Client, *plan.Desired, plan.ClusterDesired) plan.Cluster

func planLikeCommand(hf *hubFlags, use, short, long, example string, compute planFunc, print func(io.Writer, []plan.Cluster) error) *cobra.Command {
	namespace, file := "default", ""
	exit := &exitCodeFlag{}
	print = exit.recording(print)
	cmd := &cobra.Command{
		Use:     use + " ([propagation/]NAME | clusterpropagation/NAME | KIND/NAME | rgd/NAME | apipropagation/NAME | -f FILE)",
		Short:   short,
		Long:    long,
		Example: example,
		GroupID: groupFleet,
		Args: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == (file != "") {
				return usageError(fmt.Errorf("%s takes one owner (propagation/NAME, deployment/NAME, rgd/NAME, ...) or -f FILE", use))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, err := hf.client()
			if err != nil {
				return err
			}
			spokes := newSpokeClients(hub)
			var desired []*plan.Desired
			if file != "" {
				var obj client.Object
				if obj, err = propagatorFromFile(ctx, hub, file); err == nil {
					desired, err = one(propagation.Preview(ctx, hub, obj, flotillahub.RecordOwners()))
				}
			} else {
				desired, err = desiredOf(ctx, hub, args[0], scope{namespace: namespace, given: cmd.Flags().Changed("namespace")}, spokes)
			}
			if err != nil {
				return err
			}
			if len(desired) == 0 {
				_, _ = fmt.Fprintln(cmd.OutOrStdout(), "The APIPropagation serves no ResourceGraphDefinition: nothing would be delivered.")
				return nil
			}
			for _, d := range desired {
				if err := planOwner(ctx, cmd.OutOrStdout(), d, spokes, compute, print); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the Propagation or transparent-mode object")
	cmd.Flags().StringVarP(&file, "filename", "f", "", "a file holding the Propagation or ClusterPropagation to plan (other documents in it are skipped)")
	exit.register(cmd)
	return cmd
}

// planOwner prints one owner's fleet-wide holds, then what compute finds on each cluster.
func planOwner(ctx context.Context, w io.Writer, d *plan.Desired, spokes *spokeClients, compute planFunc, print func(io.Writer, []plan.Cluster) error) error {
	if d.Owner.Kind == fleetapi.OwnerKind {
		_, _ = fmt.Fprintf(w, "ResourceGraphDefinition %s:\n", d.Owner.Name)
	}
	for _, h := range d.Holds {
		_, _ = fmt.Fprintf(w, "held: %s\n", h)
	}
	var clusters []plan.Cluster
	for _, cd := range d.Clusters {
		spoke, _, err := spokes.get(ctx, cd.Cluster)
		if err != nil {
			clusters = append(clusters, plan.Cluster{Name: cd.Cluster, Err: err})
			continue
		}
		clusters = append(clusters, compute(ctx, spoke, d, cd))
	}
	if len(clusters) == 0 {
		_, _ = fmt.Fprintln(w, "No cluster gets anything: nothing would be delivered.")
		_, _ = fmt.Fprintln(w)
		return nil
	}
	if len(d.Holds) > 0 {
		_, _ = fmt.Fprintln(w)
	}
	return print(w, clusters)
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
		printPinned(w, c)
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
		printPinned(w, c)
		if c.Err != nil {
			_, _ = fmt.Fprintf(w, "Cluster %s: cannot compare: %v\n\n", c.Name, c.Err)
			continue
		}
		_, _ = fmt.Fprintf(w, "Cluster %s: %d differ, %d as desired\n", c.Name, c.Count(plan.Drifted), c.Count(plan.Unchanged))
		printItems(w, c.Items, map[plan.Action]string{plan.Drifted: "~", plan.Blocked: "!"})
	}
	return nil
}

// printPinned says which kept revision a cluster is pinned to, before its plan.
func printPinned(w io.Writer, c plan.Cluster) {
	if c.Pinned != "" {
		_, _ = fmt.Fprintf(w, "Cluster %s is pinned to revision %s (spec.revisionPins): planned with that revision's objects\n", c.Name, c.Pinned)
	}
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
