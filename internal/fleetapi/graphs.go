package fleetapi

import (
	"context"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// serveGraphs tells Graphs what a pass over an RGD found: a cluster whose CRD is Serving the
// revision it was to get expands its instances with the graph compiled for it; a cluster that
// keeps an older CRD (the revision it was to get does not compile there, or is refused)
// expands them with the graph of the revision it serves, compiled again from the kept spec
// (after a restart too); clusters that left the Placement are released (releaseGraphs), and
// those still cleaning up instances before their CRD goes are returned.
//
// The APIPropagation's tenancy goes with the graph: Cluster lets the instances reach their
// whole cluster.
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
	return r.releaseGraphs(ctx, rgd, targets, placer.Spec.Removal == flotillav1.DeletionDelete)
}

// releaseGraphs stops expanding instances of the RGD's kind on every cluster that serves it
// but those kept, except where its CRD is being deleted (deleting) and is still there: deleting
// a CRD deletes its instances, and each must be cleaned up first (its children deleted, kro's
// finalizer released), or neither it nor the CRD ever goes. It returns those clusters; a later
// pass releases them once their CRD is gone.
func (r *Reconciler) releaseGraphs(ctx context.Context, rgd *kro.ResourceGraphDefinition, keep []string, deleting bool) (waiting []string) {
	if r.Graphs == nil {
		return nil
	}
	kind := kro.InstanceKind(rgd)
	for _, c := range r.Graphs.Clusters(kind) {
		switch {
		case slices.Contains(keep, c):
		case deleting && r.crdPresent(ctx, c, kro.CRDName(rgd)):
			waiting = append(waiting, c)
		default:
			r.Graphs.Unserve(c, kind)
		}
	}
	return waiting
}

// crdPresent reports whether a cluster still has the CRD of that name, or may have it (it
// cannot be read).
func (r *Reconciler) crdPresent(ctx context.Context, cluster, name string) bool {
	engaged, err := r.Clusters.Get(ctx, multicluster.ClusterName(cluster))
	if err != nil {
		return true
	}
	crd, err := servedCRD(ctx, engaged, name)
	return err != nil || crd != nil
}

// waitingMessage is the row of a cluster whose CRD is being deleted once its instances are
// cleaned up.
const waitingMessage = "deleting the CRD: it goes once its instances are cleaned up (their children deleted, kro's finalizer released)"

// unserveGraphs stops expanding instances of kind on clusters.
func (r *Reconciler) unserveGraphs(kind schema.GroupVersionKind, clusters []string) {
	if r.Graphs == nil || kind.Empty() {
		return
	}
	for _, c := range clusters {
		r.Graphs.Unserve(c, kind)
	}
}
