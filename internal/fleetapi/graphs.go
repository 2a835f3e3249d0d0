package fleetapi

import (
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// serveGraphs tells Graphs what a pass over an RGD found: a cluster whose CRD is Serving the
// revision it was to get expands its instances with the graph compiled for it; a cluster that
// keeps an older CRD (the revision it was to get does not compile there, or is refused)
// expands them with the graph of the revision it serves, compiled again from the kept spec
// (after a restart too); clusters that left the Placement serve the kind no more.
//
// The APIPropagation's tenancy goes with the graph: Cluster lets the instances reach their
// whole cluster.
func (r *Reconciler) serveGraphs(rgd *kro.ResourceGraphDefinition, tenancy flotillav1.Tenancy, rows []flotillav1.APIClusterResult, plans map[string]clusterPlan, leaving []string) {
	if r.Graphs == nil {
		return
	}
	wide := tenancy == flotillav1.TenancyCluster
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
	r.unserveGraphs(kro.InstanceKind(rgd), leaving)
}

// unserveGraphs stops expanding instances of kind on clusters.
func (r *Reconciler) unserveGraphs(kind schema.GroupVersionKind, clusters []string) {
	if r.Graphs == nil || kind.Empty() {
		return
	}
	for _, c := range clusters {
		r.Graphs.Unserve(c, kind)
	}
}
