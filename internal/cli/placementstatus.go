package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	flotillahub "github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

// printPlacementStatus prints a Placement's Scheduled condition and one line per chosen
// cluster: its tier, its state and since when, the cluster it stands in for, and each divided
// workload's replicas there from the Delivery records of the Placement's owners (with what the
// cluster was found to fit, when it was).
func printPlacementStatus(ctx context.Context, w io.Writer, hub client.Reader, p *flotillav1.Placement, now time.Time) error {
	_, _ = fmt.Fprintf(w, "Placement %s/%s: %d clusters chosen\n", p.Namespace, p.Name, len(p.Status.Decisions))
	if c := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PlacementScheduled); c != nil {
		_, _ = fmt.Fprintf(w, "  %-9s %-6s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	if p.Status.ObservedGeneration != p.Generation {
		_, _ = fmt.Fprintln(w, "  (the decisions are for an older generation: the scheduler has not caught up yet)")
	}
	if len(p.Status.Decisions) == 0 {
		_, err := fmt.Fprintln(w, "No cluster chosen.")
		return err
	}
	records, _, err := ledger.PlacementRecords(ctx, ledger.Trust{Hub: hub, Owners: flotillahub.RecordOwners()}, client.ObjectKeyFromObject(p))
	if err != nil {
		return err
	}
	shares := map[string][]string{}
	for _, r := range records {
		for _, s := range r.Spec.Replicas {
			entry := fmt.Sprintf("%s=%d", shortWorkload(s.Object), s.Replicas)
			if s.Fits != nil {
				entry += fmt.Sprintf(" (fits %d)", *s.Fits)
			}
			shares[r.Spec.Cluster] = append(shares[r.Spec.Cluster], entry)
		}
	}
	_, _ = fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	_, _ = fmt.Fprintln(tw, "CLUSTER\tTIER\tSTATE\tSINCE\tREPLACES\tREPLICAS\tMESSAGE")
	for _, d := range p.Status.Decisions {
		state, since := string(d.State), ""
		if state == "" {
			state = string(flotillav1.DecisionActive)
		}
		if d.Since != nil {
			since = duration.HumanDuration(now.Sub(d.Since.Time))
		}
		list := shares[d.ClusterName]
		sort.Strings(list)
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ClusterName, orNone(d.Tier), state, orNone(since), orNone(d.Replaces),
			orNone(strings.Join(list, " ")), d.Message)
	}
	return tw.Flush()
}

// shortWorkload writes a record's workload (group/Kind/namespace/name) as Kind/name.
func shortWorkload(object string) string {
	parts := strings.Split(object, "/")
	if len(parts) != 4 {
		return object
	}
	return parts[1] + "/" + parts[3]
}
