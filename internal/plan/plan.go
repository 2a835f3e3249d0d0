package plan

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/drift"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Action is what would happen to one object.
type Action string

// Actions, in the order they are printed.
const (
	Create    Action = "create"
	Update    Action = "update"
	Prune     Action = "prune"
	Blocked   Action = "blocked"
	Drifted   Action = "drifted"
	Unchanged Action = "unchanged"
	Kept      Action = "kept"
)

// Item is one object's line in a plan.
type Item struct {
	Action Action
	// Object is kind, namespace and name, e.g. deployment.apps shop/web.
	Object string
	// Changes are the fields an update changes (or, for drift, how the cluster differs). A
	// Secret's values are Masked.
	Changes []drift.Change
	// Reason explains blocked and kept objects; Manager names who made a drift.
	Reason, Manager string
}

// Cluster is the plan of one cluster.
type Cluster struct {
	Name string
	// Pinned is the revision spec.revisionPins pins the cluster to (ClusterDesired.Pinned).
	Pinned string
	Items  []Item
	// Err is why the cluster could not be planned (unreachable, an override failed).
	Err error
}

// Count returns how many items have the action.
func (c Cluster) Count(a Action) int {
	n := 0
	for _, it := range c.Items {
		if it.Action == a {
			n++
		}
	}
	return n
}

// ForCluster computes what delivering cd to one cluster would do. cl reads and dry-runs on
// that cluster.
func ForCluster(ctx context.Context, cl client.Client, d *Desired, cd ClusterDesired) Cluster {
	out := Cluster{Name: cd.Cluster, Pinned: cd.Pinned, Err: cd.Err}
	if cd.Err != nil {
		return out
	}
	for _, desired := range cd.Objects {
		out.Items = append(out.Items, planObject(ctx, cl, d, d.Strategy, desired))
	}
	if !d.Prune {
		return out
	}
	prune, err := pruneItems(ctx, cl, d, d.Strategy, cd)
	if err != nil {
		out.Err = err
		return out
	}
	out.Items = append(out.Items, prune...)
	return out
}

// planObject takes a delivery's decision (decide.Decide) for one object from what the cluster
// holds now, and shows a write by dry-running it.
func planObject(ctx context.Context, cl client.Client, d *Desired, s decide.Strategy, desired *unstructured.Unstructured) Item {
	it := Item{Object: decide.Describe(desired)}
	var found decide.Live
	if d.Owner.Namespace != "" {
		scope, err := decide.ScopeOf(cl.RESTMapper(), desired)
		if err != nil {
			it.Action, it.Reason = Blocked, err.Error()
			return it
		}
		// Refused before anything is read, as a delivery does.
		if err := decide.CheckScope(d.Owner, decide.Strategy{}, desired, scope); err != nil {
			it.Action, it.Reason = Blocked, err.Error()
			return it
		}
		found.Scope = scope
	}
	live, err := get(ctx, cl, desired)
	if err != nil {
		it.Action, it.Reason = Blocked, err.Error()
		return it
	}
	var ignore [][]string
	if live != nil {
		ignore = decide.IgnoredFields(d.Ignore, desired, live)
		found.Object = live
		found.Drift = drift.Compare(desired.Object, live.Object, ignore)
	}
	dec := decide.Decide(d.Owner, s, desired, found)
	switch dec.Action {
	case decide.Conflict, decide.Refused:
		it.Action, it.Reason = Blocked, dec.Err.Error()
		return it
	case decide.Unchanged:
		it.Action = Unchanged
		return it
	case decide.Skip:
		it.Action, it.Reason = Unchanged, "mode ApplyOnce: existing objects are not updated"
		return it
	case decide.Left, decide.Ignored:
		it.Action, it.Manager = Unchanged, drift.Manager(live.GetManagedFields(), dec.Fields, deliver.FieldManager)
		it.Reason = fmt.Sprintf("changed on the cluster at %s; left as is (drift %s)", strings.Join(dec.Fields, ", "), decide.DriftOf(desired, s))
		return it
	}
	toApply := desired
	if live != nil {
		toApply = &unstructured.Unstructured{Object: drift.KeepLive(desired.Object, live.Object, ignore)}
	}
	result, err := dryRunApply(ctx, cl, toApply)
	if err != nil {
		it.Action, it.Reason = Blocked, "the cluster would refuse it: "+deliver.SecretError(desired, err).Error()
		return it
	}
	if live == nil {
		it.Action = Create
		return it
	}
	if it.Changes = redact(desired.GroupVersionKind(), drift.Diff(live.Object, result.Object)); len(it.Changes) == 0 {
		it.Action = Unchanged
		return it
	}
	it.Action = Update
	return it
}

// get reads an object directly, nil when it does not exist.
func get(ctx context.Context, cl client.Client, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err := cl.Get(ctx, client.ObjectKeyFromObject(desired), live)
	switch {
	case err == nil:
		return live, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("the cluster does not serve %s; deliver its CustomResourceDefinition first", desired.GroupVersionKind().Kind)
	}
	return nil, fmt.Errorf("read: %w", err)
}

func dryRunApply(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(out), client.FieldOwner(deliver.FieldManager), client.ForceOwnership, client.DryRunAll)
	if apierrors.IsNotFound(err) && obj.GetNamespace() != "" {
		// The namespace does not exist yet; the delivery would create it first.
		return obj, nil
	}
	return out, err
}

// pruneItems lists the owner's objects on the cluster that the desired set no longer has, and
// what a delivery's prune would do with each (decide.Leftovers, decide.Kept, decide.OverBudget).
// A plan does not know what the deliverer confirmed there; its budget counts as the owner's
// the objects it wants and those the owner's record lists (cd.Delivered).
func pruneItems(ctx context.Context, cl client.Client, d *Desired, s decide.Strategy, cd ClusterDesired) ([]Item, error) {
	want := map[string]bool{}
	for _, o := range cd.Objects {
		want[render.Key(o)] = true
	}
	var found []*unstructured.Unstructured
	for _, gvk := range d.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := cl.List(ctx, list, client.MatchingLabels{flotillav1.LabelOwner: d.Owner.LabelValue()})
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			found = append(found, &list.Items[i])
		}
	}
	stale, owned := decide.Leftovers(found, cd.Objects, d.Owner, s, func(k string) bool { return cd.Delivered[k] })
	var items []Item
	for _, o := range found {
		if !decide.Owned(o, d.Owner) || !decide.InScope(o, d.Owner, s) || want[render.Key(o)] {
			continue
		}
		it := Item{Action: Prune, Object: decide.Describe(o)}
		if why := decide.Kept(o, s); why != "" {
			it.Action, it.Reason = Kept, why
		}
		items = append(items, it)
	}
	if decide.OverBudget(s, cd.Revision, len(stale), owned) {
		for i := range items {
			if items[i].Action == Prune {
				items[i].Action = Blocked
				items[i].Reason = fmt.Sprintf("pruning %d of %d objects exceeds the prune budget (%d%%); confirm with %s",
					len(stale), owned, s.PruneBudget, decide.ConfirmCommand(d.Owner, s, s.ConfirmValue(cd.Revision)))
			}
		}
	}
	return items, nil
}

// DriftOf lists how the delivered objects on one cluster differ from what is desired now:
// changes made on the cluster, and hub changes not delivered yet (ApplyOnce, or in flight).
func DriftOf(ctx context.Context, cl client.Client, d *Desired, cd ClusterDesired) Cluster {
	out := Cluster{Name: cd.Cluster, Pinned: cd.Pinned, Err: cd.Err}
	if cd.Err != nil {
		return out
	}
	for _, desired := range cd.Objects {
		it := Item{Object: decide.Describe(desired), Action: Unchanged}
		live, err := get(ctx, cl, desired)
		switch {
		case err != nil:
			it.Action, it.Reason = Blocked, err.Error()
		case live == nil:
			it.Action, it.Reason = Drifted, "missing on the cluster"
		default:
			paths := drift.Compare(desired.Object, live.Object, decide.IgnoredFields(d.Ignore, desired, live))
			if paths == nil {
				break
			}
			it.Action, it.Manager = Drifted, drift.Manager(live.GetManagedFields(), paths, deliver.FieldManager)
			for _, p := range paths {
				seg, _ := drift.ParsePointer(p)
				want, _ := drift.Get(desired.Object, seg)
				have, _ := drift.Get(live.Object, seg)
				it.Changes = append(it.Changes, drift.Change{Path: p, Old: have, New: want})
			}
			it.Changes = redact(desired.GroupVersionKind(), it.Changes)
		}
		out.Items = append(out.Items, it)
	}
	return out
}
