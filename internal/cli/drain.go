package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/scheduler"
)

// drainPoll is how often --wait reads the Cluster.
const drainPoll = 2 * time.Second

// maxListed bounds how many Placements, and records of each, a drain's refusal names.
const maxListed = 5

// errDrainStuck ends the wait early: a Placement keeps objects on the cluster that no wait
// will move.
var errDrainStuck = errors.New("the drain cannot complete")

// waitDrained waits until the Cluster's status counts no placements, printing the count when
// it changes. It stops at once, naming them, when a Placement of an owner still on the
// cluster has nowhere else to go (see stuckPlacements): waiting would only time out.
func waitDrained(ctx context.Context, hub client.Client, name string, timeout time.Duration, out io.Writer) error {
	last := int32(-1)
	var stuck []string
	err := wait.PollUntilContextTimeout(ctx, drainPoll, timeout, true, func(ctx context.Context) (bool, error) {
		cl := &flotillav1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("cluster %s was deleted while draining", name)
			}
			return false, nil // a hub that does not answer for a moment: ask again
		}
		n := cl.Status.Placements
		if n != last {
			last = n
			if _, err := fmt.Fprintf(out, "cluster/%s: %d placements left\n", name, n); err != nil {
				return false, err
			}
		}
		if n == 0 {
			return true, nil
		}
		s, err := stuckPlacements(ctx, hub, name)
		if err != nil {
			return false, nil // ask again
		}
		if len(s) > 0 {
			stuck = s
			return false, errDrainStuck
		}
		return false, nil
	})
	if len(stuck) > 0 {
		return fmt.Errorf("cluster %s cannot be drained: %d Placements keep objects there that have nowhere else to go, "+
			"so they stay on %s (a copy leaves only once its replacement is Ready elsewhere):\n  %s\n"+
			"Either uncordon it (flotilla cluster uncordon %s: it takes placements again), or give each Placement another eligible "+
			"cluster (label a cluster to match its clusterSelector, kubectl label cluster OTHER KEY=VALUE, or add one to its clusterNames) "+
			"and run flotilla cluster drain %s --wait again",
			name, len(stuck), name, strings.Join(stuck[:min(len(stuck), maxListed)], "\n  ")+more(len(stuck)), name, name)
	}
	if err != nil {
		return fmt.Errorf("cluster %s still has %d placements after %s (see which with: kubectl get deliveries -A --field-selector spec.cluster=%s; "+
			"a move waits until the replacements are Ready elsewhere): %w", name, last, timeout, name, err)
	}
	_, err = fmt.Fprintf(out, "cluster/%s drained: nothing is placed there any more\n", name)
	return err
}

// stuckPlacements names, with why, the Placements whose owners still have objects on cluster
// (their Delivery records there) and that no wait will move off it: one that chooses no
// cluster now (its Scheduled condition is False and it has no decisions: no other cluster is
// eligible), one whose selector is invalid (it keeps the clusters it had), and one that
// tolerates the drain's taint (it keeps the cluster). It reads the Placements' status as
// their controller wrote it for their current generation, so a Placement not yet scheduled
// again after the taint is not named.
func stuckPlacements(ctx context.Context, hub client.Client, cluster string) ([]string, error) {
	records := &metav1.PartialObjectMetadataList{}
	records.SetGroupVersionKind(flotillav1.GroupVersion.WithKind("DeliveryList"))
	if err := hub.List(ctx, records, client.MatchingFields{"spec.cluster": cluster}); err != nil {
		return nil, err
	}
	if len(records.Items) == 0 {
		return nil, nil
	}
	var placements flotillav1.PlacementList
	if err := hub.List(ctx, &placements); err != nil {
		return nil, err
	}
	drain := flotillav1.ClusterTaint{Key: TaintDecommission, Effect: flotillav1.TaintEffectNoExecute}
	var out []string
	for i := range placements.Items {
		p := &placements.Items[i]
		if p.Status.ObservedGeneration != p.Generation {
			continue
		}
		why := stuckReason(p, cluster, drain)
		if why == "" {
			continue
		}
		owners := recordsOf(records.Items, ledger.PlacementSelector(client.ObjectKeyFromObject(p)))
		if len(owners) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("placement %s/%s %s (Delivery records there: %s)", p.Namespace, p.Name, why, listed(owners)))
	}
	slices.Sort(out)
	return out, nil
}

// stuckReason says why p keeps its owners' objects on cluster during a drain, or "".
func stuckReason(p *flotillav1.Placement, cluster string, drain flotillav1.ClusterTaint) string {
	keeps := slices.ContainsFunc(p.Status.Decisions, func(d flotillav1.ClusterDecision) bool { return d.ClusterName == cluster })
	cond := meta.FindStatusCondition(p.Status.Conditions, flotillav1.PlacementScheduled)
	switch {
	case keeps && scheduler.Tolerates(p.Spec.Tolerations, drain):
		return fmt.Sprintf("tolerates the taint %s:%s, so it keeps %s (take that toleration out of its spec.tolerations to move it)",
			drain.Key, drain.Effect, cluster)
	case cond == nil || cond.Status != metav1.ConditionFalse:
		return ""
	case cond.Reason == flotillav1.ReasonInvalidSelector:
		return fmt.Sprintf("has an invalid selector, so it keeps the clusters it had until that is fixed (%s)", cond.Message)
	case len(p.Status.Decisions) == 0:
		return fmt.Sprintf("chooses no cluster now (%s: %s)", cond.Reason, cond.Message)
	}
	return ""
}

// recordsOf returns the namespace/name of the records that carry every label of sel.
func recordsOf(records []metav1.PartialObjectMetadata, sel client.MatchingLabels) []string {
	var out []string
	for _, r := range records {
		match := true
		for k, v := range sel {
			match = match && r.Labels[k] == v
		}
		if match {
			out = append(out, r.Namespace+"/"+r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// listed joins at most maxListed names, saying how many more there are.
func listed(names []string) string {
	return strings.Join(names[:min(len(names), maxListed)], ", ") + more(len(names))
}

// more says how many of n items past maxListed are not shown.
func more(n int) string {
	if n <= maxListed {
		return ""
	}
	return fmt.Sprintf(" and %d more", n-maxListed)
}
