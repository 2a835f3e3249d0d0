package propagation

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/division"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/ownerpass"
	"github.com/flotilla-dev/flotilla/internal/rollout"
	"github.com/flotilla-dev/flotilla/internal/statusconds"
)

// maxClusterResults bounds status.clusterResults; counts still cover every cluster.
var maxClusterResults = 1000

// maxDriftDetailClusters bounds how many clusterResults describe their drifted objects.
const maxDriftDetailClusters = 10

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
	// held says why the clusters that left keep the objects (a fleet-wide hold that lets
	// the chosen clusters be delivered to: a Placement that has not scheduled its latest
	// change yet).
	held  string
	kinds []string
	// revisions holds the revision of clusters whose objects overrides changed; the others
	// have revision.
	revisions map[string]string
	// clusterErrors holds, per cluster, why nothing was submitted there (its overrides
	// failed, or its Delivery record could not be written).
	clusterErrors map[string]string
	// records are the propagator's Delivery records, by cluster.
	records map[string]*flotillav1.Delivery
	// moveStalled says why objects stay on clusters that left the placement: they are not
	// Ready yet where they move to.
	moveStalled string
	// unplaced say, per divided workload, why some of its replicas have no cluster (every
	// cluster at its maximum).
	unplaced []string
	// divisions say how each divided workload is divided (nil when none is).
	divisions map[string]division.Report
	// recordErr joins what failed and is retried with the pass: Delivery record writes, an
	// admission, a rollout's undo set on the owner (ownerpass.Result.Err).
	recordErr error
	// noHistory says why the latest revision is not kept ("" when it is).
	noHistory string
	// pruneBlocked says why deletions wait for confirmation, fleet-wide.
	pruneBlocked string
	// rollout is where the rollout of the latest revision stands (nil: none), rolloutClusters
	// where each cluster stands in it, and rolloutStages the stages that started or completed
	// in this pass (said in Events).
	rollout         *flotillav1.RolloutStatus
	rolloutClusters map[string]flotillav1.ClusterRolloutState
	rolloutStages   []rollout.StageChange
	// retryAfter, when set, is when a hold that no watched event ends is looked at again.
	retryAfter time.Duration
	// now is when the pass began; progressDeadline how long a move may wait before it is
	// reported stalled.
	now              time.Time
	progressDeadline time.Duration
}

func (in *statusInput) revisionOf(cluster string) string {
	if r, ok := in.revisions[cluster]; ok {
		return r
	}
	return in.revision
}

// fromRecord is a cluster's entry as its Delivery record has it.
func fromRecord(cluster string, st flotillav1.DeliveryStatus) flotillav1.ClusterResult {
	return flotillav1.ClusterResult{Cluster: cluster, Revision: st.Revision, Applied: st.Applied, Ready: st.Ready,
		Failed: st.Failed, Message: st.Message, Drifted: st.Drifted, Fighting: st.Fighting}
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
		meta.SetStatusCondition(&out.Conditions, pruneBlockedCondition(in, in.pruneBlocked))
		return out
	}
	out.SelectedObjects = int32(in.selected)
	out.TargetClusters = int32(len(in.targets))
	out.Rollout = rollout.SettleStatus(in.previous.Rollout, in.rollout)
	previousRows := make(map[string]*flotillav1.ClusterRolloutState, len(in.previous.ClusterResults))
	for i := range in.previous.ClusterResults {
		previousRows[in.previous.ClusterResults[i].Cluster] = in.previous.ClusterResults[i].Rollout
	}
	out.AppliedClusters, out.FailedClusters, out.ReadyClusters = 0, 0, 0
	var firstNotReady string
	var entries []flotillav1.ClusterResult
	var firstFailure, conflict string
	pruneBlocked := in.pruneBlocked // a fleet-wide hold; a cluster's own comes from its result
	out.Drifted = 0
	for _, c := range in.targets {
		res, ok := in.results[c]
		entry := flotillav1.ClusterResult{Cluster: c}
		rec, hadRecord := in.records[c]
		revision := in.revisionOf(c)
		switch {
		case in.clusterErrors[c] != "":
			entry.Message = ownerkinds.Limit(in.clusterErrors[c]+" (the cluster keeps its last good version)", 512)
			entry.Failed = int32(in.selected)
			out.FailedClusters++
			if firstFailure == "" {
				firstFailure = c + ": " + in.clusterErrors[c]
			}
		case (!ok || res.Disconnected) && hadRecord && rec.Status.Revision == revision:
			// Nothing new to deliver, and nothing new known (a controller restart, or the
			// cluster unreachable): what its Delivery record says still holds.
			entry = fromRecord(c, rec.Status)
			out.AppliedClusters++
			if entry.Ready == entry.Applied {
				out.ReadyClusters++
			}
		case !ok:
			entry.Message = "delivery pending"
		case res.Disconnected:
			entry.Message = ownerkinds.Limit(res.Message, 512)
		default:
			entry.Applied, entry.Failed, entry.Message = int32(res.Applied), int32(res.Failed), ownerkinds.Limit(res.Message, 512)
			entry.Ready = int32(res.Ready)
			entry.Drifted, entry.DriftedObjects = int32(res.Drifted), driftedObjects(res.DriftedObjects)
			entry.Fighting, entry.FightingObjects = int32(res.Fighting), driftedObjects(res.FightingObjects)
			out.Drifted += entry.Drifted
			if res.Complete && res.Revision == revision {
				entry.Revision = res.Revision
				out.AppliedClusters++
				if res.Ready == res.Applied {
					out.ReadyClusters++
				} else if firstNotReady == "" {
					firstNotReady = c + ": " + res.NotReady
				}
			} else if res.PruneBlocked != "" && res.Failed == 0 {
				if pruneBlocked == "" {
					pruneBlocked = c + ": " + res.PruneBlocked
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
		if row, ok := in.rolloutClusters[c]; ok && in.rollout != nil {
			entry.Rollout = rollout.SettleRow(previousRows[c], &row)
		}
		entries = append(entries, entry)
	}
	for c, res := range in.dropped {
		entries = append(entries, flotillav1.ClusterResult{Cluster: c, Applied: int32(res.Applied), Message: cmp.Or(res.Message, "removing objects: the cluster left the placement")})
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
	// Drift and fight details of a few clusters say enough and keep status small in a large
	// fleet.
	detailed, fights := 0, 0
	for i := range entries {
		if len(entries[i].DriftedObjects) > 0 {
			if detailed++; detailed > maxDriftDetailClusters {
				entries[i].DriftedObjects = nil
			}
		}
		if len(entries[i].FightingObjects) > 0 {
			if fights++; fights > maxDriftDetailClusters {
				entries[i].FightingObjects = nil
			}
		}
	}
	out.ClusterResults = entries
	switch {
	case in.hold != nil:
		cond.Reason, cond.Message = in.hold.reason, in.hold.message
	case len(in.targets) == 0:
		cond.Reason, cond.Message = flotillav1.ReasonNoClusters, "the Placement chooses no cluster; see its Scheduled condition"
	case conflict != "":
		cond.Reason, cond.Message = flotillav1.ReasonConflict, truncate(conflict)
	case pruneBlocked != "":
		cond.Reason, cond.Message = flotillav1.ReasonPruneBlocked, truncate(pruneBlocked)
	case in.moveStalled != "" && firstFailure == "":
		cond.Reason, cond.Message = flotillav1.ReasonMoveInProgress, truncate(in.moveStalled)
	case firstFailure != "":
		cond.Reason, cond.Message = flotillav1.ReasonApplyFailed, truncate(fmt.Sprintf("%d of %d clusters failed; first: %s", out.FailedClusters, len(in.targets), firstFailure))
	case int(out.AppliedClusters) == len(in.targets) && len(in.dropped) == 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, flotillav1.ReasonApplied
		cond.Message = fmt.Sprintf("%d objects delivered to %d clusters", in.selected, len(in.targets))
	default:
		cond.Reason = flotillav1.ReasonProgressing
		cond.Message = fmt.Sprintf("%d of %d clusters have the current revision", out.AppliedClusters, len(in.targets))
		switch {
		case len(in.dropped) > 0 && in.held != "":
			cond.Message += fmt.Sprintf("; the objects stay on %d clusters that left the placement: %s", len(in.dropped), in.held)
		case len(in.dropped) > 0:
			cond.Message += fmt.Sprintf("; removing objects from %d clusters that left the placement", len(in.dropped))
		}
	}
	meta.SetStatusCondition(&out.Conditions, cond)
	meta.SetStatusCondition(&out.Conditions, readyCondition(cond, out, in, firstNotReady))
	meta.SetStatusCondition(&out.Conditions, pruneBlockedCondition(in, pruneBlocked))
	meta.SetStatusCondition(&out.Conditions, driftedCondition(in, out))
	meta.SetStatusCondition(&out.Conditions, fightingCondition(in, out))
	meta.SetStatusCondition(&out.Conditions, movingCondition(in))
	if placed, divides := replicasPlacedCondition(in); divides {
		meta.SetStatusCondition(&out.Conditions, placed)
	} else {
		meta.RemoveStatusCondition(&out.Conditions, flotillav1.PropagationReplicasPlaced)
	}
	return out
}

// replicasPlacedCondition says whether every replica of the divided workloads has a cluster
// within its room, and how each is divided; divides is false when no workload is divided (the
// condition is then absent). The worst reason of any workload is the condition's.
func replicasPlacedCondition(in statusInput) (c metav1.Condition, divides bool) {
	if len(in.divisions) == 0 {
		return c, false
	}
	rank := map[string]int{flotillav1.ReasonPlaced: 0, flotillav1.ReasonInsufficientCapacity: 1,
		flotillav1.ReasonSpreadUnsatisfiable: 2, flotillav1.ReasonLimitsExceeded: 3}
	reason := flotillav1.ReasonPlaced
	var msgs []string
	for _, w := range slices.Sorted(maps.Keys(in.divisions)) {
		msgs = append(msgs, w+": "+in.divisions[w].Message)
		if r := in.divisions[w].Reason; rank[r] > rank[reason] {
			reason = r
		}
	}
	c = metav1.Condition{Type: flotillav1.PropagationReplicasPlaced, Status: metav1.ConditionFalse, Reason: reason,
		ObservedGeneration: in.generation, Message: truncate(strings.Join(msgs, "; "))}
	if reason == flotillav1.ReasonPlaced {
		c.Status = metav1.ConditionTrue
	}
	return c, true
}

// fightingCondition is True while someone on a cluster changes objects back after every
// correction; its message names the first such object, the fields and who changes them.
func fightingCondition(in statusInput, out flotillav1.PropagationStatus) metav1.Condition {
	c := metav1.Condition{Type: flotillav1.PropagationFighting, Status: metav1.ConditionFalse, ObservedGeneration: in.generation,
		Reason: flotillav1.ReasonNoFight, Message: "every correction of drift holds"}
	objects, clusters, first := 0, 0, ""
	for _, e := range out.ClusterResults {
		if e.Fighting == 0 {
			continue
		}
		objects += int(e.Fighting)
		clusters++
		if first == "" && len(e.FightingObjects) > 0 {
			d := e.FightingObjects[0]
			first = e.Cluster + ": " + deliver.Drift{Object: d.Object, Fields: d.Fields, Deleted: d.Deleted, Manager: d.Manager, Fighting: true}.Describe()
		}
	}
	if objects == 0 {
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, flotillav1.ReasonFighting
	c.Message = truncate(fmt.Sprintf("%d objects on %d clusters are changed back after every correction; Flotilla corrects them only when their backoff ends (at most every %s), or at once when they change on the hub; first: %s",
		objects, clusters, drift.MaxBackoff, first))
	return c
}

// pruneBlockedCondition is True while deletions wait for confirmation.
func pruneBlockedCondition(in statusInput, blocked string) metav1.Condition {
	c := metav1.Condition{Type: flotillav1.PropagationPruneBlocked, Status: metav1.ConditionFalse, ObservedGeneration: in.generation,
		Reason: flotillav1.ReasonApplied, Message: "no deletion is waiting for confirmation"}
	if blocked != "" {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, flotillav1.ReasonPruneBlocked, truncate(blocked)
	}
	return c
}

// driftedCondition is True while objects differ from what was applied and are left so.
func driftedCondition(in statusInput, out flotillav1.PropagationStatus) metav1.Condition {
	c := metav1.Condition{Type: flotillav1.PropagationDrifted, Status: metav1.ConditionFalse, ObservedGeneration: in.generation,
		Reason: flotillav1.ReasonInSync, Message: "no drift is known"}
	if out.Drifted == 0 {
		return c
	}
	first := ""
	for _, e := range out.ClusterResults {
		if len(e.DriftedObjects) > 0 {
			d := e.DriftedObjects[0]
			first = e.Cluster + ": " + deliver.Drift{Object: d.Object, Fields: d.Fields, Deleted: d.Deleted, Manager: d.Manager}.Describe()
			break
		}
	}
	c.Status, c.Reason = metav1.ConditionTrue, flotillav1.ReasonDrifted
	c.Message = truncate(fmt.Sprintf("%d objects differ from what was applied and are left so; first: %s", out.Drifted, first))
	return c
}

func driftedObjects(ds []deliver.Drift) []flotillav1.DriftedObject {
	if len(ds) == 0 {
		return nil
	}
	out := make([]flotillav1.DriftedObject, 0, len(ds))
	for _, d := range ds {
		fields := make([]string, 0, len(d.Fields))
		for _, f := range d.Fields {
			fields = append(fields, ownerkinds.Limit(f, 256))
		}
		out = append(out, flotillav1.DriftedObject{Object: ownerkinds.Limit(d.Object, 600), Fields: fields, Manager: ownerkinds.Limit(d.Manager, 256), Deleted: d.Deleted})
	}
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
	statusconds.PropagationWithRollout(&want.Conditions, want.ObservedGeneration, want.Rollout) // Reconciling or Stalled, for kstatus
	if equality.Semantic.DeepEqual(want, *p.status) {
		return nil
	}
	before := p.deepCopy()
	*p.status = want
	// The patch always carries the counts the printer columns show, so that 0 shows as 0 and
	// not blank (a merge patch leaves out what equals its base).
	base := before.deepCopy()
	base.status.SelectedObjects, base.status.TargetClusters, base.status.AppliedClusters = -1, -1, -1
	base.status.ReadyClusters, base.status.FailedClusters, base.status.Drifted = -1, -1, -1
	if err := r.Hub.Status().Patch(ctx, p.obj, client.MergeFrom(base.obj)); err != nil {
		return fmt.Errorf("update status of %s: %w", p.owner(), err)
	}
	r.own.Set(p.obj.GetUID(), want.DeepCopy(), cacheLag)
	r.recordTransition(p.obj, before.status.Conditions, want.Conditions)
	if old := before.status.Rollout; want.Rollout != nil && (old == nil || old.Phase != want.Rollout.Phase || old.Revision != want.Rollout.Revision) {
		ownerpass.RolloutEvent(r.recorder, p.obj, want.Rollout)
	}
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

func truncate(s string) string { return ownerkinds.Limit(s, 1024) }

// movingCondition is True while a move waits (in.moveStalled), with reason MoveStalled once it
// has waited longer than the progress deadline (from the condition's lastTransitionTime to
// True, so a restart does not reset it), and False (Settled) otherwise.
func movingCondition(in statusInput) metav1.Condition {
	c := metav1.Condition{Type: flotillav1.PropagationMoving, Status: metav1.ConditionFalse, Reason: flotillav1.ReasonSettled,
		Message: "no move under way", ObservedGeneration: in.generation}
	if in.moveStalled == "" {
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, flotillav1.ReasonMoveInProgress, truncate(in.moveStalled)
	since := movingSince(in)
	if in.progressDeadline > 0 && !in.now.Before(since.Add(in.progressDeadline)) {
		c.Reason = flotillav1.ReasonMoveStalled
		c.Message = truncate(fmt.Sprintf("waiting for more than %s (moves.progressDeadline): %s", in.progressDeadline, in.moveStalled))
	}
	c.LastTransitionTime = metav1.NewTime(since)
	return c
}

// isStalled reports whether conditions say a move has waited beyond its deadline.
func isStalled(conditions []metav1.Condition) bool {
	c := meta.FindStatusCondition(conditions, flotillav1.PropagationMoving)
	return c != nil && c.Reason == flotillav1.ReasonMoveStalled
}

// progressDeadline is how long a move of a Placement's owners may wait before it is reported
// stalled.
func progressDeadline(pl *flotillav1.Placement) time.Duration {
	if pl != nil && pl.Spec.Moves != nil && pl.Spec.Moves.ProgressDeadline != nil {
		return pl.Spec.Moves.ProgressDeadline.Duration
	}
	return flotillav1.DefaultProgressDeadline
}

// untilStalled is how long until a move under way would be reported stalled (0: no move, or
// already stalled, or no deadline).
func untilStalled(in statusInput) time.Duration {
	if in.moveStalled == "" || in.progressDeadline <= 0 {
		return 0
	}
	return max(movingSince(in).Add(in.progressDeadline).Sub(in.now), 0)
}

// movingSince is when the move under way began: when the Moving condition turned True, or now.
func movingSince(in statusInput) time.Time {
	if prev := meta.FindStatusCondition(in.previous.Conditions, flotillav1.PropagationMoving); prev != nil && prev.Status == metav1.ConditionTrue {
		return prev.LastTransitionTime.Time
	}
	return in.now
}
