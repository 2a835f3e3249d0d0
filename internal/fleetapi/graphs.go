package fleetapi

import (
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/kro"
)

// serveGraphs tells Graphs what a pass over an RGD found: a cluster whose CRD is Serving at the
// RGD's generation expands its instances with the graph compiled for it; a cluster that keeps
// an older CRD (the new generation does not compile there, or is blocked) keeps the graph it
// had; clusters that left the Placement serve the kind no more.
func (r *Reconciler) serveGraphs(rgd *kro.ResourceGraphDefinition, rows []flotillav1.APIClusterResult, plans map[string]clusterPlan, leaving []string) {
	if r.Graphs == nil {
		return
	}
	for _, row := range rows {
		p, planned := plans[row.Cluster]
		if !planned || p.compiled == nil || row.Phase != flotillav1.APIServing {
			continue
		}
		r.Graphs.Serve(row.Cluster, instances.Graph{Compiled: p.compiled, Revision: strconv.FormatInt(rgd.Generation, 10)})
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
