package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// isRGDKind reports whether a kind written on the command line names kro's
// ResourceGraphDefinitions; isAPIPropagationKind, Flotilla's APIPropagations.
func isRGDKind(kind string) bool {
	switch strings.ToLower(kind) {
	case "rgd", "rgds", "resourcegraphdefinition", "resourcegraphdefinitions":
		return true
	}
	return false
}

func isAPIPropagationKind(kind string) bool {
	switch strings.ToLower(kind) {
	case "fapi", "apipropagation", "apipropagations":
		return true
	}
	return false
}

// printRGDStatus prints where one RGD is served: the APIPropagation serving it, its instances
// in the fleet, the first not ready, and one line per cluster.
func printRGDStatus(ctx context.Context, w io.Writer, hub client.Reader, name string) error {
	p, api, err := servingAPIPropagation(ctx, hub, name)
	if err != nil {
		return err
	}
	return printServedAPI(w, p, api)
}

// servingAPIPropagation returns the APIPropagation serving an RGD, and its result for the RGD.
// The RGD's status lives in the status of the APIPropagation that serves it (Flotilla never
// writes kro's RGD), so that is what is read: one list of APIPropagations.
func servingAPIPropagation(ctx context.Context, hub client.Reader, name string) (*flotillav1.APIPropagation, flotillav1.APIResult, error) {
	list := &flotillav1.APIPropagationList{}
	if err := hub.List(ctx, list); err != nil {
		return nil, flotillav1.APIResult{}, fmt.Errorf("list APIPropagations: %w", err)
	}
	var others []string
	for i := range list.Items {
		p := &list.Items[i]
		for _, api := range p.Status.APIs {
			if api.Name != name {
				continue
			}
			if api.Message != "" {
				others = append(others, fmt.Sprintf("APIPropagation %s: %s", p.Name, api.Message))
				continue
			}
			return p, api, nil
		}
	}
	if len(others) > 0 {
		return nil, flotillav1.APIResult{}, fmt.Errorf("ResourceGraphDefinition %s is not served:\n  %s", name, strings.Join(others, "\n  "))
	}
	return nil, flotillav1.APIResult{}, fmt.Errorf("no APIPropagation serves ResourceGraphDefinition %s: choose it with one "+
		"(spec.resourceGraphDefinitions, see `kubectl explain apipropagation.spec`), or wait for its status", name)
}

// printServedAPI prints one API an APIPropagation serves.
func printServedAPI(w io.Writer, p *flotillav1.APIPropagation, api flotillav1.APIResult) error {
	_, _ = fmt.Fprintf(w, "ResourceGraphDefinition %s: %s, generation %d, served by APIPropagation %s\n",
		api.Name, orNone(api.Kind), api.Generation, p.Name)
	_, _ = fmt.Fprintf(w, "  clusters: %d serving generation %d, %d failed\n", api.ServingClusters, api.Generation, api.FailedClusters)
	_, _ = fmt.Fprintf(w, "  instances: %s\n", countsLine(api.Instances))
	printNotReady(w, api.NotReady)
	return printClusterRows(w, p.Status.ClusterResults, api.Name)
}

// printAPIPropagationStatus prints an APIPropagation's conditions, each API it chooses, and
// one line per cluster and API.
func printAPIPropagationStatus(w io.Writer, p *flotillav1.APIPropagation) error {
	s := p.Status
	_, _ = fmt.Fprintf(w, "APIPropagation %s: %d APIs, %d clusters chosen, %d serving, %d failed; instances: %s\n",
		p.Name, s.APICount, s.TargetClusters, s.ServingClusters, s.FailedClusters, countsLine(s.Instances))
	for _, t := range []string{flotillav1.APIPropagationAccepted, flotillav1.APIPropagationServing} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			_, _ = fmt.Fprintf(w, "  %-8s %-6s %s: %s\n", t, c.Status, c.Reason, c.Message)
		}
	}
	if len(s.APIs) > 0 {
		_, _ = fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		_, _ = fmt.Fprintln(tw, "API\tKIND\tGENERATION\tSERVING\tFAILED\tINSTANCES\tACTIVE\tMESSAGE")
		for _, a := range s.APIs {
			total, active := "", ""
			if a.Instances != nil {
				total, active = strconv.Itoa(int(a.Instances.Total)), strconv.Itoa(int(a.Instances.Active))
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", a.Name, orNone(a.Kind), a.Generation,
				a.ServingClusters, a.FailedClusters, orNone(total), orNone(active), a.Message)
		}
		_ = tw.Flush()
	}
	for _, a := range s.APIs {
		printNotReady(w, a.NotReady)
	}
	return printClusterRows(w, s.ClusterResults, "")
}

// printClusterRows prints the per-cluster table, of one API (api set) or of all of them.
func printClusterRows(w io.Writer, rows []flotillav1.APIClusterResult, api string) error {
	_, _ = fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := "CLUSTER\tPHASE\tSERVED\tINSTANCES\tACTIVE\tIN-PROGRESS\tERROR\tREASON\tMESSAGE"
	if api == "" {
		header = "CLUSTER\tAPI\t" + strings.TrimPrefix(header, "CLUSTER\t")
	}
	_, _ = fmt.Fprintln(tw, header)
	n := 0
	for _, r := range rows {
		if api != "" && r.API != api {
			continue
		}
		n++
		served := "<none>"
		if r.ServedGeneration > 0 {
			served = strconv.FormatInt(r.ServedGeneration, 10)
		}
		counts := []string{"<none>", "", "", ""}
		if c := r.Instances; c != nil {
			counts = []string{strconv.Itoa(int(c.Total)), strconv.Itoa(int(c.Active)), strconv.Itoa(int(c.InProgress)), strconv.Itoa(int(c.Error))}
		}
		line := r.Cluster + "\t"
		if api == "" {
			line += r.API + "\t"
		}
		_, _ = fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", line, r.Phase, served, strings.Join(counts, "\t"), orNone(r.Reason), r.Message)
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "No cluster results yet.")
		return err
	}
	return tw.Flush()
}

// printNotReady names the instances the status lists as not ready.
func printNotReady(w io.Writer, list []flotillav1.NotReadyInstance) {
	for _, n := range list {
		_, _ = fmt.Fprintf(w, "  not ready: %s %s %s", n.Cluster, n.Instance, n.State)
		if n.Reason != "" || n.Message != "" {
			_, _ = fmt.Fprintf(w, " (%s: %s)", n.Reason, n.Message)
		}
		_, _ = fmt.Fprintln(w)
	}
}

// countsLine writes instance counts on one line.
func countsLine(c *flotillav1.InstanceCounts) string {
	if c == nil {
		return "not counted yet"
	}
	return fmt.Sprintf("%d (%d active, %d in progress, %d error, %d deleting)", c.Total, c.Active, c.InProgress, c.Error, c.Deleting)
}
