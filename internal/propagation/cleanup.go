package propagation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// removalRevision is the revision of a job that removes everything of an owner from a cluster.
const removalRevision = "removed"

// handleDropped removes the propagator's objects from clusters the placement no longer
// chooses, once every chosen cluster has the current revision and every object is Ready there
// (make before break). It records in in the results of the clusters still being emptied, why
// the removal waits for confirmation, and why it waits for readiness.
func (r *Reconciler) handleDropped(ctx context.Context, p propagator, in *statusInput, budget int) {
	chosen := map[string]bool{}
	for _, c := range in.targets {
		chosen[c] = true
	}
	ready := true
	var notReady []string
	for _, c := range in.targets {
		res, ok := in.results[c]
		switch {
		case !ok || !res.Complete || res.Revision != in.revisionOf(c):
			ready = false
		case res.Ready < res.Applied:
			notReady = append(notReady, c+": "+res.NotReady)
		}
	}
	owner := p.owner()
	dropped := map[string]deliver.Result{}
	var leaving []string
	for _, c := range ledger.Clusters(in.records) {
		if chosen[c] {
			continue
		}
		gone, err := r.clusterGone(ctx, c)
		if err != nil {
			// Not knowing is not "gone": keep the cluster in the status and ask again later.
			dropped[c] = deliver.Result{Message: "cannot read the Cluster (" + err.Error() + "); its objects are kept until it can be read"}
			continue
		}
		if gone {
			// An unjoined cluster is only disconnected: its objects stay, unmanaged.
			r.forgetCluster(ctx, owner, c, dropped)
			continue
		}
		leaving = append(leaving, c)
	}
	in.dropped = dropped
	switch {
	case len(leaving) == 0:
		return
	case !ready:
		for _, c := range leaving {
			dropped[c] = deliver.Result{Message: "waiting for the chosen clusters before removing objects here"}
		}
		return
	case len(notReady) > 0:
		sort.Strings(notReady)
		in.moveStalled = fmt.Sprintf("the objects stay on %s until they are Ready on every chosen cluster; not Ready: %s",
			strings.Join(leaving, ", "), strings.Join(notReady, "; "))
		for _, c := range leaving {
			dropped[c] = deliver.Result{Message: "kept until the objects are Ready where they move to (see the Applied condition)"}
		}
		return
	}
	confirmed := p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]
	if blocked := fleetBudget(p, leaving, len(chosen)+len(leaving), budget, confirmed); blocked != "" {
		for _, c := range leaving {
			dropped[c] = deliver.Result{Message: "kept: the removal waits for confirmation (see the PruneBlocked condition)"}
		}
		in.pruneBlocked = blocked
		return
	}
	for _, c := range leaving {
		r.remove(ctx, p, c, recordedKinds(in.records, c, in.kinds), dropped)
	}
}

// remove submits the removal of the propagator's objects from a cluster, looking in kinds.
// Once they are gone, it deletes the cluster's record and reports true; until then, dropped
// gets the cluster's progress.
func (r *Reconciler) remove(ctx context.Context, p propagator, c string, kinds []string, dropped map[string]deliver.Result) bool {
	owner := p.owner()
	r.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Revision: removalRevision, Prune: true,
		PruneKinds: render.ParseKinds(kinds), Strategy: decide.Strategy{Deletion: p.spec.Strategy.Deletion,
			PruneBudget: decide.Unbudgeted, PruneConfirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]}})
	res, ok := r.Deliverer.Result(owner, c)
	if !ok || !res.Complete || res.Revision != removalRevision {
		dropped[c] = res
		return false
	}
	return r.forgetCluster(ctx, owner, c, dropped)
}

// forgetCluster deletes owner's record on a cluster and drops what the deliverer knows of it,
// reporting whether both happened.
func (r *Reconciler) forgetCluster(ctx context.Context, owner render.Owner, c string, dropped map[string]deliver.Result) bool {
	if err := r.Ledger.Remove(ctx, owner, c); err != nil {
		dropped[c] = deliver.Result{Message: err.Error()}
		return false
	}
	r.Deliverer.Forget(owner, c)
	return true
}

// fleetBudget says why removing the owner from the leaving clusters waits for confirmation, or
// "". The per-cluster prune budget cannot see a Placement that shrinks from ten clusters to one
// (each removal empties a cluster it no longer chooses), so the same budget also bounds the
// share of the clusters one change empties: leaving clusters out of all the owner touches
// (chosen and leaving). A move from one cluster to another is half, within the default budget.
// The confirmation names the set of clusters, so it does not carry over to another removal.
func fleetBudget(p propagator, leaving []string, touched, budget int, confirmed string) string {
	if len(leaving) == 0 || len(leaving)*100 <= budget*touched {
		return ""
	}
	sorted := slices.Clone(leaving)
	sort.Strings(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, ",")))
	token := "clusters-" + hex.EncodeToString(sum[:])[:10]
	if confirmed == token {
		return ""
	}
	return fmt.Sprintf("the change would remove the objects from %d of the %d clusters (%s), more than the prune budget (%d%%) allows; nothing was removed. "+
		"Fix the Placement, or confirm with: kubectl annotate --overwrite %s %s %s=%s",
		len(leaving), touched, strings.Join(sorted, ", "), budget, strings.ToLower(p.kind), p.obj.GetName(), flotillav1.AnnotationConfirmPrune, token)
}

func (r *Reconciler) clusterGone(ctx context.Context, name string) (bool, error) {
	err := r.Hub.Get(ctx, client.ObjectKey{Name: name}, &flotillav1.Cluster{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// cleanup removes (or, with Orphan, leaves) a deleted propagator's objects on every cluster
// it delivered to, then releases its finalizer. Unjoined clusters are skipped: their objects
// stay. A cluster that cannot be reached holds the finalizer until it can.
func (r *Reconciler) cleanup(ctx context.Context, p propagator) error {
	if !controllerutil.ContainsFinalizer(p.obj, flotillav1.FinalizerCleanup) {
		return nil
	}
	owner := p.owner()
	records, err := r.Ledger.Records(ctx, owner)
	if err != nil {
		return err
	}
	var pending []string
	progress := map[string]deliver.Result{}
	for _, c := range ledger.Clusters(records) {
		if gone, err := r.clusterGone(ctx, c); err == nil && gone {
			if !r.forgetCluster(ctx, owner, c, progress) {
				pending = append(pending, c)
			}
			continue
		}
		if !r.remove(ctx, p, c, recordedKinds(records, c, nil), progress) {
			pending = append(pending, c)
		}
	}
	if len(pending) > 0 {
		sort.Strings(pending)
		in := statusInput{generation: p.obj.GetGeneration(), previous: *p.status,
			hold: &holdReason{flotillav1.ReasonProgressing, fmt.Sprintf("removing delivered objects from %d clusters: %v", len(pending), pending)}}
		return r.writeStatus(ctx, p, in)
	}
	r.forget(owner)
	before := p.deepCopy()
	controllerutil.RemoveFinalizer(p.obj, flotillav1.FinalizerCleanup)
	return client.IgnoreNotFound(r.Hub.Patch(ctx, p.obj, client.MergeFrom(before.obj)))
}

// forget drops everything the controller and the deliverer hold of an owner that is gone.
func (r *Reconciler) forget(owner render.Owner) {
	r.Deliverer.ForgetEverywhere(owner)
	r.renders.forget(owner)
	r.Revisions.Forget(owner)
	r.rules.Forget(owner.String())
	r.mu.Lock()
	delete(r.pendingSince, owner)
	delete(r.noHistory, owner)
	r.mu.Unlock()
}

// ownerOf names the owner a request is for: a ClusterPropagation has no namespace.
func ownerOf(req reconcile.Request) render.Owner {
	kind := kindPropagation
	if req.Namespace == "" {
		kind = kindClusterPropagation
	}
	return render.Owner{Kind: kind, Namespace: req.Namespace, Name: req.Name}
}
