package fanout

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/override"
	"github.com/flotilla-dev/flotilla/internal/percluster"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Wants computes what each chosen cluster gets (percluster.Compute), a move's holds judged by
// the latest results (readyAt; records are the owner's Delivery records). A division over
// clusters with placement limits runs admitted by the ledger, so that two owners never both
// take a cluster's last room; when admission fails, err says why and every cluster keeps what
// it has.
func (f *Fanout) Wants(ctx context.Context, in percluster.Input, records map[string]*flotillav1.Delivery) (percluster.Outcome, error) {
	in.ReadyAt = f.readyAt(ctx, in.Owner, records)
	limits := override.LimitsOf(in.Facts)
	if len(limits) == 0 || !in.Divides() {
		return percluster.Compute(in), nil
	}
	var out percluster.Outcome
	err := f.Ledger.Admit(ctx, in.Owner, limits, func(free map[string]division.Usage) map[string]division.Usage {
		in.Free = free
		out = percluster.Compute(in)
		return out.Placed()
	})
	return out, err
}

// readyAt reports whether owner's delivery to a cluster is complete and Ready at a revision:
// the deliverer's latest result, or, for a cluster an agent delivers to (a pull cluster, every
// cluster of a sharded hub), what the agent last reported into the record (recordedReadyAt).
// The hub's deliverer has no result for such a cluster, so asking it would hold a move there
// forever.
func (f *Fanout) readyAt(ctx context.Context, owner render.Owner, records map[string]*flotillav1.Delivery) func(c, revision string) bool {
	return func(c, revision string) bool {
		if f.Agents.Deliver(ctx, c) {
			return recordedReadyAt(records[c], revision)
		}
		res, ok := f.Deliverer.Result(owner, c)
		return ok && res.ReadyAt(revision)
	}
}

// recordedReadyAt reports whether a record says its cluster runs revision whole and Ready now.
// status.revision is the last revision delivered *completely* and stays while a later delivery
// of it fails, so the latest counts must say so too: nothing failed, every object applied and
// Ready.
func recordedReadyAt(rec *flotillav1.Delivery, revision string) bool {
	if rec == nil {
		return false
	}
	st := rec.Status
	return st.Revision == revision && st.Failed == 0 && st.Reason == "" && st.Applied >= st.Count && st.Ready >= st.Applied
}

// Planned is Wants as `flotilla plan` shows it: where the division ends (no move holds),
// within what book says the limited clusters admit now.
func Planned(ctx context.Context, book *ledger.Ledger, in percluster.Input) (percluster.Outcome, error) {
	in.ReadyAt = nil
	if limits := override.LimitsOf(in.Facts); len(limits) > 0 && in.Divides() {
		free, err := book.Free(ctx, in.Owner, limits)
		if err != nil {
			return percluster.Outcome{}, err
		}
		in.Free = free
	}
	return percluster.Compute(in), nil
}

// Facts reads what override rules and divisions see of each cluster (its labels, allocatable
// capacity and placement limits) from the hub cache; a Cluster that cannot be read has none.
func Facts(ctx context.Context, hub client.Reader, clusters []string) map[string]override.Cluster {
	out := make(map[string]override.Cluster, len(clusters))
	for _, name := range clusters {
		c := override.Cluster{Name: name}
		cl := &flotillav1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err == nil {
			c.Labels = cl.Labels
			c.Allocatable = division.UsageFrom(cl.Status.Allocatable)
			c.Limits = division.UsageFrom(cl.Spec.PlacementLimits)
			c.Unreachable = unreachable(cl)
		}
		out[name] = c
	}
	return out
}

// unreachable says why a probed Cluster is not Ready ("" when it is, or has not been probed
// yet: the deliverer says whether it reaches one of those).
func unreachable(cl *flotillav1.Cluster) string {
	cond := meta.FindStatusCondition(cl.Status.Conditions, flotillav1.ClusterReady)
	switch {
	case cond == nil || cond.Status == metav1.ConditionTrue:
		return ""
	case cond.Reason != "":
		return "not Ready: " + cond.Reason
	default:
		return "not Ready"
	}
}
