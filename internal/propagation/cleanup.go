package propagation

import (
	"context"
	"fmt"
	"sort"

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
// clusters still being emptied.
func (r *Reconciler) handleDropped(ctx context.Context, p propagator, in statusInput) map[string]deliver.Result {
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
	for _, prev := range p.status.ClusterResults {
		c := prev.Cluster
		if chosen[c] {
			continue
		}
		gone, err := r.clusterGone(ctx, c)
		if err != nil || gone {
			// An unjoined cluster is only disconnected: its objects stay, unmanaged.
			r.Deliverer.Forget(owner, c)
			continue
		}
		if !ready {
			dropped[c] = deliver.Result{Message: "waiting for the chosen clusters before removing objects here"}
			continue
		}
		r.Deliverer.Submit(deliver.Job{Owner: owner, Cluster: c, Revision: removalRevision, Prune: true,
			PruneKinds: render.ParseKinds(in.kinds), Deletion: p.spec.Strategy.Deletion, PruneBudget: deliver.Unbudgeted})
		res, ok := r.Deliverer.Result(owner, c)
		if ok && res.Complete && res.Revision == removalRevision {
			r.Deliverer.Forget(owner, c)
			continue
		}
		dropped[c] = res
	}
	return dropped
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
			PruneKinds: render.ParseKinds(p.status.DeliveredKinds), Deletion: p.spec.Strategy.Deletion, PruneBudget: deliver.Unbudgeted})
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
