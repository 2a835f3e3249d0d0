package fleetapi

import (
	"context"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// serveGraphs tells Graphs what a pass found: a Serving cluster expands its instances with the
// graph compiled for it, a held one with the graph of the revision it serves (p.held); it
// returns the clusters still cleaning up instances before their CRD goes (releaseGraphs).
func (r *Reconciler) serveGraphs(ctx context.Context, rgd *kro.ResourceGraphDefinition, placer *flotillav1.APIPropagation, targets []string, rows []flotillav1.APIClusterResult, plans map[string]clusterPlan) (waiting []string) {
	if r.Graphs == nil {
		return nil
	}
	wide := placer.Spec.Tenancy == flotillav1.TenancyCluster
	for _, row := range rows {
		p, planned := plans[row.Cluster]
		switch {
		case !planned:
		case p.compiled != nil && row.Phase == flotillav1.APIServing:
			r.Graphs.Serve(row.Cluster, instances.Graph{Compiled: p.compiled, Revision: strconv.FormatInt(p.generation, 10), ClusterWide: wide})
		case p.held != nil && row.ServedGeneration > 0:
			r.Graphs.Serve(row.Cluster, instances.Graph{Compiled: p.held, Revision: strconv.FormatInt(row.ServedGeneration, 10), ClusterWide: wide})
		}
	}
	return r.releaseGraphs(ctx, rgd, targets)
}

// releaseGraphs stops expanding instances of the RGD's kind on every cluster that serves it
// but those kept, except where its CRD is being deleted: deleting a CRD deletes its instances,
// and each must be cleaned up first (its children deleted, kro's finalizer released), or
// neither it nor the CRD ever goes. It returns those clusters; a later pass releases them once
// their CRD is gone. A CRD that stays (Orphan, protected, or not Flotilla's) releases its
// cluster at once: its instances are left as they are.
func (r *Reconciler) releaseGraphs(ctx context.Context, rgd *kro.ResourceGraphDefinition, keep []string) (waiting []string) {
	if r.Graphs == nil {
		return nil
	}
	kind := kro.InstanceKind(rgd)
	for _, c := range r.Graphs.Clusters(kind) {
		switch {
		case slices.Contains(keep, c):
		case r.crdTerminating(ctx, c, kro.CRDName(rgd)):
			waiting = append(waiting, c)
		default:
			r.Graphs.Unserve(c, kind)
		}
	}
	return waiting
}

// crdTerminating reports whether a cluster's CRD of that name is being deleted, read from the
// cluster itself (the cache may not show a deletion just issued). A cluster that cannot be
// read may be: it waits, unless it has left the fleet (its Cluster is gone from the hub).
// Only clusters leaving an API are asked, so a steady fleet reads nothing.
func (r *Reconciler) crdTerminating(ctx context.Context, cluster, name string) bool {
	engaged, err := r.Clusters.Get(ctx, multicluster.ClusterName(cluster))
	if err != nil {
		return !apierrors.IsNotFound(r.Hub.Get(ctx, client.ObjectKey{Name: cluster}, &flotillav1.Cluster{}))
	}
	crd, err := readCRD(ctx, engaged.GetAPIReader(), name)
	return err != nil || (crd != nil && crd.GetDeletionTimestamp() != nil)
}

// waitingMessage is the row of a cluster whose CRD is being deleted once its instances are
// cleaned up.
const waitingMessage = "deleting the CRD: it goes once its instances are cleaned up (their children deleted, kro's finalizer released)"

// unserveGraphs stops expanding instances of kind everywhere.
func (r *Reconciler) unserveGraphs(kind schema.GroupVersionKind) {
	if r.Graphs == nil || kind.Empty() {
		return
	}
	for _, c := range r.Graphs.Clusters(kind) {
		r.Graphs.Unserve(c, kind)
	}
}
