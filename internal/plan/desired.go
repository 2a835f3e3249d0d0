package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Desired is what one owner (a Propagation, a ClusterPropagation, a transparent-mode object,
// an RGD an APIPropagation serves) wants on each cluster its Placement chooses, computed by
// the owner's package as its controller computes it (their Preview functions); ForCluster and
// DriftOf show it against the clusters.
type Desired struct {
	Owner render.Owner
	// Strategy is how a delivery of the owner decides (decide.Decide), confirmation included.
	Strategy decide.Strategy
	Ignore   drift.IgnoreSet
	// Kinds are every kind the owner delivers now or delivered before (where to look for
	// objects to prune); Prune is false while a delivery prunes nothing (a Propagation whose
	// selectors newly match nothing).
	Kinds []schema.GroupVersionKind
	Prune bool
	// Holds say what the owner's pass holds fleet-wide (package holds, and a Propagation's
	// empty selection), each naming what ends it; printed before the clusters.
	Holds    []string
	Clusters []ClusterDesired
}

// ClusterDesired is what one cluster should hold.
type ClusterDesired struct {
	Cluster  string
	Objects  []*unstructured.Unstructured
	Revision string
	// Pinned is the kept revision the owner's spec.revisionPins pins the cluster to, when that
	// is not the latest: Objects are that revision's.
	Pinned string
	// Delivered are the objects (render.Key) the owner's record says its latest delivery to
	// the cluster had: what a plan counts as the owner's there besides Objects, as a
	// delivery counts what it confirmed (decide.Leftovers).
	Delivered map[string]bool
	// Err says why the cluster's objects cannot be computed (an override fails there, a
	// pinned revision is not kept, an API does not compile against the cluster's schemas).
	Err error
}

// DeliveredKeys are the render.Keys of the objects a Delivery record lists, nil without one.
func DeliveredKeys(rec *flotillav1.Delivery) map[string]bool {
	if rec == nil {
		return nil
	}
	out := map[string]bool{}
	for _, group := range rec.Status.Objects {
		for _, gvk := range render.ParseKinds([]string{group.Kind}) {
			for _, name := range group.Names {
				out[gvk.Group+"/"+gvk.Kind+"/"+group.Namespace+"/"+name] = true
			}
		}
	}
	return out
}
