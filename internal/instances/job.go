package instances

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// kindOf maps a group-kind to the version the spoke serves; false when it serves none.
type kindOf func(schema.GroupKind) (schema.GroupVersionKind, bool, error)

// expansion is one pass over an instance: kro's plan, turned into the deliverer's job.
type expansion struct {
	owner    render.Owner
	instance *unstructured.Unstructured
	// childKinds are the kinds of the graph's resources (not its external references).
	childKinds []schema.GroupVersionKind
	plan       *kro.Plan
	// previous is the deliverer's latest result for the owner, if any.
	previous    deliver.Result
	hasPrevious bool
	kindOf      kindOf
	// clusterWide lets the children be anywhere on the cluster (Graph.ClusterWide).
	clusterWide bool
	// refused, when set, says why the instance is not expanded at all: the job only shows
	// that on it, with state ERROR, and writes nothing else (not even kro's finalizer).
	refused string
}

// clusterScopedRefusal is why a cluster-scoped instance is not expanded under the default
// tenancy: its children could go anywhere on its cluster, with Flotilla's identity there, and
// anyone allowed to create the instance would get that. Under tenancy Cluster it is expanded.
const clusterScopedRefusal = "instances of a cluster-scoped kind are expanded only when the APIPropagation serving the API " +
	"sets tenancy: Cluster: their children could go anywhere on the cluster"

// job is what the deliverer is asked to do for the pass: apply the children kro resolved
// (carrying kro's labels, and Flotilla's markers on top), prune only when kro allows it, keep
// the instance's finalizer, labels and ApplySet inventory, and write its status.
func (x expansion) job() (deliver.Job, error) {
	plan := x.plan
	if x.refused != "" {
		plan.Hold(x.instance, kro.StateError, x.refused)
		return deliver.Job{Owner: x.owner, Cluster: x.owner.Cluster, Revision: render.Revision(nil),
			Status: []*unstructured.Unstructured{withStatus(x.instance, plan.Status)}}, nil
	}
	objects := make([]*unstructured.Unstructured, 0, len(plan.Children))
	var unconfirmed []string
	for _, child := range plan.Children {
		obj, err := render.Render(child.Object, x.owner)
		if err != nil {
			return deliver.Job{}, fmt.Errorf("resource %s: %w", child.NodeID, err)
		}
		objects = append(objects, obj)
		if !delivering(child, obj) {
			unconfirmed = append(unconfirmed, decide.Describe(obj))
		}
	}
	render.Sort(objects)
	revision := render.Revision(objects)
	pruneKinds, err := x.pruneKinds()
	if err != nil {
		return deliver.Job{}, err
	}
	x.hold(revision, unconfirmed)
	job := deliver.Job{
		Owner:      x.owner,
		Cluster:    x.owner.Cluster,
		Objects:    objects,
		Revision:   revision,
		PruneKinds: pruneKinds,
		Prune:      plan.Prune,
		// includeWhen turning false is the user's own intent: no prune budget. Children a kro
		// on the cluster applied for this instance (its ApplySet's) are taken over as they are.
		Strategy: decide.Strategy{PruneBudget: decide.Unbudgeted, AdoptMarked: decide.Mark{Key: kro.ApplySetPartOfLabel, Value: kro.ApplySetID(x.instance)},
			ClusterWide: x.clusterWide},
		Status: []*unstructured.Unstructured{withStatus(x.instance, plan.Status)},
	}
	if !errors.Is(plan.Err, kro.ErrInvalidInventory) {
		job.OwnerMeta = ownerMeta(x.instance, plan.Instance)
	}
	return job, nil
}

// hold reports the instance not ready where kro would call it ACTIVE on what the spoke cache
// shows, but that is not yet what is being delivered (the cache catches up after a write),
// and shows a failed delivery of this revision on the instance, since kro's plan cannot know
// of it.
func (x expansion) hold(revision string, unconfirmed []string) {
	plan := x.plan
	if plan.Err != nil || plan.Suspended {
		return
	}
	r := x.previous
	if x.hasPrevious && r.Revision == revision && !r.Complete && !r.Disconnected && r.Message != "" {
		state := kro.StateInProgress
		if r.Permanent {
			state = kro.StateError
		}
		plan.Hold(x.instance, state, "resource reconciliation failed: "+r.Message)
		return
	}
	if plan.State == kro.StateActive && len(unconfirmed) > 0 {
		plan.Hold(x.instance, kro.StateInProgress, "awaiting resource readiness: "+strings.Join(unconfirmed, ", ")+" not yet delivered")
	}
}

// delivering reports whether the live copy of a child already is what obj delivers, so that
// kro's readiness judged on it stands: it carries obj's hash, or Flotilla never delivered it (a
// kro on the cluster applied it) and it holds every field kro resolved apart from metadata.
// Delivering such an object only adds labels and annotations, which change neither its
// generation nor its status: an instance kro left ACTIVE stays ACTIVE when taken over. An
// object of an earlier delivery is held until the cache shows the new one, as before.
func delivering(child kro.Child, obj *unstructured.Unstructured) bool {
	switch live := child.Live; {
	case live == nil:
		return false
	case render.HashOf(live) != "":
		return render.HashOf(live) == render.HashOf(obj)
	default:
		return drift.Compare(child.Object.Object, live.Object, [][]string{{"metadata"}}) == nil
	}
}

// pruneKinds are the kinds the instance's children may be of: the graph's, and those its
// ApplySet inventory lists (kinds it had children of before the graph changed).
func (x expansion) pruneKinds() ([]schema.GroupVersionKind, error) {
	out := slices.Clone(x.childKinds)
	inventory := x.plan.Instance.Annotations
	if inventory == nil {
		inventory = x.instance.GetAnnotations()
	}
	listed, err := inventoryKinds(inventory, x.kindOf)
	if err != nil {
		return nil, err
	}
	for _, gvk := range listed {
		if !slices.ContainsFunc(out, func(k schema.GroupVersionKind) bool { return k.GroupKind() == gvk.GroupKind() }) {
			out = append(out, gvk)
		}
	}
	return out, nil
}

// inventoryKinds maps the group-kinds ApplySet annotations list to the versions the spoke
// serves; kinds it does not serve have no objects there. Annotations without an inventory list
// nothing.
func inventoryKinds(annotations map[string]string, kindOf kindOf) ([]schema.GroupVersionKind, error) {
	if _, ok := annotations[kro.ApplySetGroupKindsAnnotation]; !ok {
		return nil, nil
	}
	gks, err := kro.InventoryKinds(annotations)
	if err != nil {
		return nil, err
	}
	return servedKinds(gks, kindOf)
}

// childKinds are the kinds of a graph's resources, in topological order, without repeats.
func childKinds(c *kro.Compiled) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, n := range c.Nodes() {
		if (n.Type == kro.NodeResource || n.Type == kro.NodeCollection) && !slices.Contains(out, n.Kind) {
			out = append(out, n.Kind)
		}
	}
	return out
}

// servedKinds maps group-kinds to the versions the spoke serves, leaving out those it does not.
func servedKinds(gks []schema.GroupKind, kindOf kindOf) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, gk := range gks {
		gvk, ok, err := kindOf(gk)
		if err != nil {
			return nil, fmt.Errorf("map %s on the spoke: %w", gk, err)
		}
		if ok {
			out = append(out, gvk)
		}
	}
	return out, nil
}
