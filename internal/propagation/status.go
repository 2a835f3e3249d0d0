package propagation

import (
	"context"

	"fmt"
	corev1 "k8s.io/api/core/v1"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
)

// maxClusterResults bounds status.clusterResults; counts still cover every cluster.
const maxClusterResults = 1000

// holdReason explains why nothing is (or only part is) being delivered.
type holdReason struct{ reason, message string }

// statusInput is everything the status of one propagator is computed from.
type statusInput struct {
	generation int64
	previous   flotillav1.PropagationStatus
	hold       *holdReason
	selected   int
	revision   string
	targets    []string
	results    map[string]deliver.Result
	dropped    map[string]deliver.Result
	kinds      []string
}

// computeStatus returns the status for in. It is pure.
func computeStatus(in statusInput) flotillav1.PropagationStatus {
	out := *in.previous.DeepCopy()
	out.ObservedGeneration = in.generation
	cond := metav1.Condition{Type: flotillav1.PropagationApplied, ObservedGeneration: in.generation, Status: metav1.ConditionFalse}
	if in.hold != nil && in.hold.reason != flotillav1.ReasonNothingSelected {
		cond.Reason, cond.Message = in.hold.reason, in.hold.message
		meta.SetStatusCondition(&out.Conditions, cond)
		meta.SetStatusCondition(&out.Conditions, readyCondition(cond, out, in, ""))
		return out
	}
	if in.kinds != nil {
		out.DeliveredKinds = in.kinds
	}
	out.SelectedObjects = int32(in.selected)
	out.TargetClusters = int32(len(in.targets))
	out.AppliedClusters, out.FailedClusters, out.ReadyClusters = 0, 0, 0
	var firstNotReady string
	previous := map[string]flotillav1.ClusterResult{}
	for _, r := range in.previous.ClusterResults {
		previous[r.Cluster] = r
	}
	var entries []flotillav1.ClusterResult
	var firstFailure, conflict string
	for _, c := range in.targets {
		res, ok := in.results[c]
		entry := flotillav1.ClusterResult{Cluster: c}
		prev, hadPrev := previous[c]
		switch {
		case (!ok || res.Disconnected) && hadPrev && prev.Revision == in.revision:
			// Nothing new to deliver, and nothing new known (a controller restart, or the
			// cluster unreachable): what was recorded still holds.
			entry = prev
			out.AppliedClusters++
			if prev.Ready == prev.Applied {
				out.ReadyClusters++
			}
		case !ok:
			entry.Message = "delivery pending"
		case res.Disconnected:
			entry.Message = limit(res.Message, 512)
		default:
			entry.Applied, entry.Failed, entry.Message = int32(res.Applied), int32(res.Failed), limit(res.Message, 512)
			entry.Ready = int32(res.Ready)
			if res.Complete && res.Revision == in.revision {
				entry.Revision = res.Revision
				out.AppliedClusters++
				if res.Ready == res.Applied {
					out.ReadyClusters++
				} else if firstNotReady == "" {
					firstNotReady = c + ": " + res.NotReady
				}
			} else if res.Failed > 0 || res.Message != "" {
				out.FailedClusters++
				if firstFailure == "" {
					firstFailure = c + ": " + res.Message
				}
				if res.Conflict && conflict == "" {
					conflict = c + ": " + res.Message
				}
			}
		}
		entries = append(entries, entry)
	}
	for c, res := range in.dropped {
		entries = append(entries, flotillav1.ClusterResult{Cluster: c, Applied: int32(res.Applied), Message: orDefault(res.Message, "removing objects: the cluster left the placement")})
	}
	sort.Slice(entries, func(i, j int) bool {
		fi, fj := entries[i].Revision == "", entries[j].Revision == ""
		if fi != fj {
			return fi
		}
		return entries[i].Cluster < entries[j].Cluster
	})
	if len(entries) > maxClusterResults {
		entries = entries[:maxClusterResults]
	}
	out.ClusterResults = entries
	switch {
	case in.hold != nil:
		cond.Reason, cond.Message = in.hold.reason, in.hold.message
	case len(in.targets) == 0:
		cond.Reason, cond.Message = flotillav1.ReasonNoClusters, "the Placement chooses no cluster; see its Scheduled condition"
	case conflict != "":
		cond.Reason, cond.Message = flotillav1.ReasonConflict, truncate(conflict)
	case firstFailure != "":
		cond.Reason, cond.Message = flotillav1.ReasonApplyFailed, truncate(fmt.Sprintf("%d of %d clusters failed; first: %s", out.FailedClusters, len(in.targets), firstFailure))
	case int(out.AppliedClusters) == len(in.targets) && len(in.dropped) == 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, flotillav1.ReasonApplied
		cond.Message = fmt.Sprintf("%d objects delivered to %d clusters", in.selected, len(in.targets))
	default:
		cond.Reason = flotillav1.ReasonProgressing
		cond.Message = fmt.Sprintf("%d of %d clusters have the current revision", out.AppliedClusters, len(in.targets))
		if len(in.dropped) > 0 {
			cond.Message += fmt.Sprintf("; removing objects from %d clusters that left the placement", len(in.dropped))
		}
	}
	meta.SetStatusCondition(&out.Conditions, cond)
	meta.SetStatusCondition(&out.Conditions, readyCondition(cond, out, in, firstNotReady))
	return out
}

// readyCondition derives Ready from Applied and the clusters' readiness.
func readyCondition(applied metav1.Condition, out flotillav1.PropagationStatus, in statusInput, firstNotReady string) metav1.Condition {
	c := metav1.Condition{Type: flotillav1.PropagationReady, Status: metav1.ConditionFalse, ObservedGeneration: in.generation}
	switch {
	case applied.Status != metav1.ConditionTrue:
		c.Reason, c.Message = flotillav1.ReasonNotApplied, "not every object is applied yet; see the Applied condition"
	case int(out.ReadyClusters) < len(in.targets):
		c.Reason = flotillav1.ReasonNotReady
		c.Message = truncate(fmt.Sprintf("%d of %d clusters ready; first not ready: %s", out.ReadyClusters, len(in.targets), firstNotReady))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, flotillav1.ReasonReady
		c.Message = fmt.Sprintf("every object is ready on %d clusters", len(in.targets))
	}
	return c
}

// writeStatus patches the status if it changed: one write per change burst.
func (r *Reconciler) writeStatus(ctx context.Context, p propagator, in statusInput) error {
	want := computeStatus(in)
	if equality.Semantic.DeepEqual(want, *p.status) {
		return nil
	}
	before := p.deepCopy()
	*p.status = want
	if err := r.Hub.Status().Patch(ctx, p.obj, client.MergeFrom(before.obj)); err != nil {
		return fmt.Errorf("update status of %s: %w", p.owner(), err)
	}
	r.recordTransition(p.obj, before.status.Conditions, want.Conditions)
	return nil
}

// recordTransition emits an Event when the Applied condition changes reason: Normal when it
// becomes Applied, Warning when it reports a problem.
func (r *Reconciler) recordTransition(obj client.Object, before, after []metav1.Condition) {
	old := meta.FindStatusCondition(before, flotillav1.PropagationApplied)
	cur := meta.FindStatusCondition(after, flotillav1.PropagationApplied)
	if cur == nil || (old != nil && old.Reason == cur.Reason) || r.recorder == nil {
		return
	}
	switch cur.Reason {
	case flotillav1.ReasonApplied:
		r.recorder.Event(obj, corev1.EventTypeNormal, cur.Reason, cur.Message)
	case flotillav1.ReasonProgressing:
	default:
		r.recorder.Event(obj, corev1.EventTypeWarning, cur.Reason, cur.Message)
	}
}

func truncate(s string) string { return limit(s, 1024) }

// limit cuts s to at most n characters, marking the cut.
func limit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
