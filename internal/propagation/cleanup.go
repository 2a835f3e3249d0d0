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
	"github.com/flotilla-dev/flotilla/internal/render"
)

// removalRevision is the revision of a job that removes everything of an owner from a cluster.
const removalRevision = "removed"

// handleDropped removes the propagator's objects from clusters the placement no longer
// chooses, once every chosen cluster has the current revision. It returns the results of the
// clusters still being emptied, and why the removal waits for confirmation ("" if it does not).
func (r *Reconciler) handleDropped(ctx context.Context, p propagator, in statusInput, budget int) (map[string]deliver.Result, string) {
	chosen := map[string]bool{}
	for _, c := range in.targets {
		chosen[c] = true
	}
	ready := true
	for _, c := range in.targets {
		if res, ok := in.results[c]; !ok || !res.Complete || res.Revision != in.revisionOf(c) {
			ready = false
		}
	}
	owner := p.owner()
	dropped := map[string]deliver.Result{}
	var leaving []string
	for _, prev := range p.status.ClusterResults {
		c := prev.Cluster
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
			r.Deliverer.Forget(owner, c)
			continue
		}
		leaving = append(leaving, c)
	}
	if !ready {
		for _, c := range leaving {
			dropped[c] = deliver.Result{Message: "waiting for the chosen clusters before removing objects here"}
		}
		return dropped, ""
	}
	confirmed := p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]
	if blocked := fleetBudget(p, leaving, len(chosen)+len(leaving), budget, confirmed); blocked != "" {
		for _, c := range leaving {
			dropped[c] = deliver.Result{Message: "kept: the removal waits for confirmation (see the PruneBlocked condition)"}
		}
		return dropped, blocked
	}
	for _, c := range leaving {
		r.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Revision: removalRevision, Prune: true,
			PruneKinds: render.ParseKinds(in.kinds), Deletion: p.spec.Strategy.Deletion, PruneBudget: deliver.Unbudgeted,
			PruneConfirmed: confirmed})
		res, ok := r.Deliverer.Result(owner, c)
		if ok && res.Complete && res.Revision == removalRevision {
			r.Deliverer.Forget(owner, c)
			continue
		}
		dropped[c] = res
	}
	return dropped, ""
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
	clusters := map[string]bool{}
	for _, res := range p.status.ClusterResults {
		clusters[res.Cluster] = true
	}
	if decisions, err := r.decisions(ctx, p); err == nil && decisions != nil {
		for _, c := range *decisions {
			clusters[c] = true
		}
	}
	var pending []string
	for c := range clusters {
		if gone, err := r.clusterGone(ctx, c); err == nil && gone {
			r.Deliverer.Forget(owner, c)
			continue
		}
		r.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Revision: removalRevision, Prune: true,
			PruneKinds: render.ParseKinds(p.status.DeliveredKinds), Deletion: p.spec.Strategy.Deletion, PruneBudget: deliver.Unbudgeted,
			PruneConfirmed: p.obj.GetAnnotations()[flotillav1.AnnotationConfirmPrune]})
		res, ok := r.Deliverer.Result(owner, c)
		if !ok || !res.Complete || res.Revision != removalRevision {
			pending = append(pending, c)
		}
	}
	if len(pending) > 0 {
		sort.Strings(pending)
		in := statusInput{generation: p.obj.GetGeneration(), previous: *p.status,
			hold: &holdReason{flotillav1.ReasonProgressing, fmt.Sprintf("removing delivered objects from %d clusters: %v", len(pending), pending)}}
		return r.writeStatus(ctx, p, in)
	}
	for c := range clusters {
		r.Deliverer.Forget(owner, c)
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
	r.rules.Forget(owner.String())
	r.mu.Lock()
	delete(r.pendingSince, owner)
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
