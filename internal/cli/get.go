package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func newGetCommand(hf *hubFlags) *cobra.Command {
	get := &cobra.Command{
		Use:   "get TYPE [NAME...]",
		Short: "Show the fleet's objects",
		Long: `Show the fleet's objects. flotilla get lists clusters; the hub's other objects
(propagations, placements, deliveries, ...) are listed by kubectl get with the hub's
kubeconfig, and explained cluster by cluster by flotilla status.`,
		Example: `  flotilla get clusters
  flotilla get clusters spoke-1 spoke-2 -o wide`,
		GroupID: groupFleet,
		Args:    cobra.ArbitraryArgs,
		// kubectl's flags (-n, -l, ...) after a type flotilla get does not list must not hide
		// the advice about that type behind an unknown flag.
		FParseErrWhitelist:         cobra.FParseErrWhitelist{UnknownFlags: true},
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError(fmt.Errorf("flotilla get needs a resource type: flotilla get clusters"))
			}
			return usageError(unknownResourceType(cmd, args[0]))
		},
	}
	get.AddCommand(newGetClustersCommand(hf))
	return get
}

func newGetClustersCommand(hf *hubFlags) *cobra.Command {
	var output, selector, namespace string
	var watchChanges, allNamespaces bool
	cmd := &cobra.Command{
		Use:     "clusters [NAME...]",
		Aliases: []string{"cluster", "fcl", "clusters.flotilla.dev", "cluster.flotilla.dev"},
		Short:   "List the joined clusters with their health and capacity",
		Long: `List the joined clusters with their health and capacity: all of them, the ones named,
or the ones whose labels match --selector. With --watch, print a line again each time a
cluster changes, until interrupted.`,
		Example: `  flotilla get clusters
  flotilla get clusters spoke-1 -o wide
  flotilla get clusters -l region=eu-west
  flotilla get clusters -w
  flotilla get clusters -o yaml
  flotilla get clusters -o jsonpath='{.items[*].metadata.name}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, names []string) error {
			p, err := objectPrinter(output)
			if err != nil {
				return err
			}
			if p == nil && output != "" && output != "wide" {
				return usageError(fmt.Errorf("--output %q: want wide, %s", output, objectOutputs))
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return usageError(fmt.Errorf("--selector %q: %w", selector, err))
			}
			if len(names) > 0 && selector != "" {
				return usageError(fmt.Errorf("name clusters or choose them with --selector, not both"))
			}
			hub, err := hf.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if watchChanges {
				var stop func()
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			q := clusterQuery{hub: hub, names: names, selector: sel}
			found, missing, rv, err := q.list(ctx)
			if err != nil {
				return fmt.Errorf("list clusters on the hub: %w", err)
			}
			out := cmd.OutOrStdout()
			show := clusterPrinter(out, output, p, len(names) == 1, watchChanges)
			switch {
			case len(found) > 0 || (p != nil && len(missing) == 0 && !watchChanges):
				err = show(found...) // an empty List for -o json or yaml
			case len(missing) > 0 || watchChanges:
			case selector != "":
				_, err = fmt.Fprintf(out, "No clusters match the selector %s.\n", sel)
			default:
				_, err = fmt.Fprintln(out, "No clusters joined. Join one with: flotilla join NAME --kubeconfig FILE")
			}
			if err != nil {
				return err
			}
			if len(missing) > 0 {
				return clustersNotFound(missing)
			}
			if !watchChanges {
				return nil
			}
			return q.watch(ctx, rv, show)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format: wide, "+objectOutputs)
	f.StringVarP(&selector, "selector", "l", "", "label selector, e.g. region=eu-west,env!=dev or 'tier in (gold,silver)'")
	f.BoolVarP(&watchChanges, "watch", "w", false, "after listing, print each cluster again when it changes, until interrupted")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "accepted and ignored: Clusters are cluster-scoped")
	f.StringVarP(&namespace, "namespace", "n", "", "accepted and ignored: Clusters are cluster-scoped")
	_ = f.MarkHidden("namespace")
	return cmd
}

// clustersNotFound says which named clusters the hub does not have.
func clustersNotFound(names []string) error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	what := "cluster"
	if len(names) > 1 {
		what = "clusters"
	}
	return fmt.Errorf("%s %s not found on the hub (list them with: flotilla get clusters)", what, strings.Join(quoted, ", "))
}

// clusterPrinter returns what prints clusters for an -o: the table (headed once), or the
// objects with p: one alone when single, each alone when watching, else a List.
func clusterPrinter(w io.Writer, output string, p printers.ResourcePrinter, single, watching bool) func(...flotillav1.Cluster) error {
	if p == nil {
		t := &clusterTable{w: w, wide: output == "wide"}
		return func(cs ...flotillav1.Cluster) error { return t.print(time.Now(), cs...) }
	}
	return func(cs ...flotillav1.Cluster) error {
		objs := make([]client.Object, len(cs))
		for i := range cs {
			objs[i] = &cs[i]
		}
		if !watching {
			return printObjects(w, p, single, objs...)
		}
		for _, o := range objs {
			if err := printObjects(w, p, true, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// clusterTable prints clusters like kubectl would: a table, or a wider one; the header once.
type clusterTable struct {
	w      io.Writer
	wide   bool
	headed bool
}

func (t *clusterTable) print(now time.Time, clusters ...flotillav1.Cluster) error {
	tw := tabwriter.NewWriter(t.w, 0, 8, 3, ' ', 0)
	if !t.headed {
		header := "NAME\tREADY\tVERSION\tNODES\tCPU\tMEMORY\tAGE"
		if t.wide {
			header += "\tPODS\tREASON\tLABELS"
		}
		_, _ = fmt.Fprintln(tw, header)
		t.headed = true
	}
	for _, c := range clusters {
		ready, reason := "Unknown", ""
		if cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady); cond != nil {
			ready, reason = string(cond.Status), cond.Reason
		}
		row := []string{c.Name, ready, orNone(c.Status.KubernetesVersion), fmt.Sprint(c.Status.NodeCount),
			quantity(c, "cpu"), quantity(c, "memory"), duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))}
		if t.wide {
			row = append(row, quantity(c, "pods"), orNone(reason), labelList(c.Labels))
		}
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func quantity(c flotillav1.Cluster, name string) string {
	if q, ok := c.Status.Allocatable[corev1.ResourceName(name)]; ok {
		return q.String()
	}
	return "<none>"
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func labelList(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		if k == flotillav1.LabelClusterID {
			continue
		}
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return orNone(strings.Join(parts, ","))
}
