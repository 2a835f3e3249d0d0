package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func newGetCommand(hf *hubFlags) *cobra.Command {
	get := &cobra.Command{
		Use:     "get",
		Short:   "Show the fleet's objects",
		GroupID: groupFleet,
	}
	var output string
	clusters := &cobra.Command{
		Use:     "clusters",
		Aliases: []string{"cluster", "fcl"},
		Short:   "List the joined clusters with their health and capacity",
		Example: `  flotilla get clusters
  flotilla get clusters -o wide
  flotilla get clusters -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !validOutput(output) {
				return usageError(fmt.Errorf("--output %q: want wide, yaml or json", output))
			}
			hub, err := hf.client()
			if err != nil {
				return err
			}
			var list flotillav1.ClusterList
			if err := hub.List(cmd.Context(), &list); err != nil {
				return fmt.Errorf("list clusters on the hub: %w (is Flotilla installed? run `flotilla install`)", err)
			}
			sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
			return printClusters(cmd.OutOrStdout(), &list, output, time.Now())
		},
	}
	clusters.Flags().StringVarP(&output, "output", "o", "", "output format: wide, yaml or json")
	get.AddCommand(clusters)
	return get
}

func validOutput(o string) bool {
	switch o {
	case "", "wide", "yaml", "json":
		return true
	}
	return false
}

// printClusters prints clusters like kubectl would: a table, a wider table, or the objects.
func printClusters(w io.Writer, list *flotillav1.ClusterList, output string, now time.Time) error {
	switch output {
	case "yaml", "json":
		list.APIVersion, list.Kind = "v1", "List"
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = flotillav1.GroupVersion.String(), "Cluster"
			list.Items[i].ManagedFields = nil
		}
		var data []byte
		var err error
		if output == "yaml" {
			data, err = yaml.Marshal(list)
		} else {
			data, err = json.MarshalIndent(list, "", "    ")
			data = append(data, '\n')
		}
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if len(list.Items) == 0 {
		_, err := fmt.Fprintln(w, "No clusters joined. Join one with: flotilla join NAME --kubeconfig FILE")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := "NAME\tREADY\tVERSION\tNODES\tCPU\tMEMORY\tAGE"
	if output == "wide" {
		header += "\tPODS\tREASON\tLABELS"
	}
	_, _ = fmt.Fprintln(tw, header)
	for _, c := range list.Items {
		ready, reason := "Unknown", ""
		if cond := meta.FindStatusCondition(c.Status.Conditions, flotillav1.ClusterReady); cond != nil {
			ready, reason = string(cond.Status), cond.Reason
		}
		row := []string{c.Name, ready, orNone(c.Status.KubernetesVersion), fmt.Sprint(c.Status.NodeCount),
			quantity(c, "cpu"), quantity(c, "memory"), duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))}
		if output == "wide" {
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
