package kro

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	instancectrl "github.com/kubernetes-sigs/kro/pkg/controller/instance"
	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
	"github.com/kubernetes-sigs/kro/pkg/graph"
	"github.com/kubernetes-sigs/kro/pkg/runtime"
)

// ErrInstanceDeleting is returned by Evaluate for an instance being deleted: deletion follows
// the instance's persisted ApplySet inventory and apply-order waves, never the graph.
var ErrInstanceDeleting = errors.New("instance is being deleted")

// errInventory marks an instance kro refuses to manage because its ApplySet metadata is
// partial or inconsistent.
var errInventory = errors.New("cannot install finalizer with invalid ApplySet inventory")

// Plan is what kro would do for one instance in one pass, given what exists on its cluster:
// the children to apply, whether pruning is safe, the instance's metadata and the status it
// should show. Evaluate computes it without I/O beyond the Observer.
type Plan struct {
	// Children are the objects to apply, in dependency order, carrying kro's labels (instance
	// identity, kro.run/owned and version, node id, collection position, ApplySet membership)
	// and the apply-order annotation. A node that waits on data has no child yet.
	Children []Child
	// Nodes reports each resource evaluated, in topological order. A walk stopped by Err does
	// not report the resources after the one that failed.
	Nodes []NodeResult
	// Prune says that every resource resolved and no child is refused, so objects of the
	// instance that Children no longer has (an includeWhen turned false, a forEach item gone,
	// a resource removed from the RGD) may be deleted. While any resource waits on data, kro
	// keeps them, and so must the caller.
	Prune bool
	// Suspended is set when the instance carries kro.run/reconcile: suspended: nothing is
	// applied or pruned, only the status is written.
	Suspended bool
	// Err is the first error that stopped the walk: a CEL evaluation error, an Observer error,
	// a child being deleted, two resources naming the same object, an invalid inventory. kro
	// applies nothing in such a pass, and neither should the caller: Children is then empty.
	Err error
	// State is the instance state kro would write (IN_PROGRESS, ACTIVE or ERROR).
	State string
	// Status is the instance's whole status as kro would write it: state, conditions (kro's, or
	// the RGD's author conditions instead) and the RGD's CEL status fields, of which those
	// whose inputs are not available are absent.
	Status map[string]any
	// Instance is the metadata the instance must carry before its children are applied.
	Instance InstanceMetadata
}

// Child is one object to apply.
type Child struct {
	NodeID     string
	ApplyOrder int
	Object     *unstructured.Unstructured
	// Live is the object as observed on the cluster, nil if it does not exist yet.
	Live *unstructured.Unstructured
}

// NodeResult is the state of one resource after a pass.
type NodeResult struct {
	ID string
	// State is kro's node state: IN_PROGRESS, SKIPPED, SYNCED, WAITING_FOR_READINESS, DELETING
	// or ERROR.
	State string
	// Pending says that the resource waits on a dependency that does not exist or is not ready
	// yet (kro's data pending): it is not applied, and nothing is pruned.
	Pending bool
	// Excluded says that includeWhen, the resource's or a dependency's, is false: it is not
	// applied, and an existing object of it is pruned.
	Excluded bool
	// Ready says that the resource exists on the cluster and its readyWhen holds.
	Ready bool
	// Message says what the resource waits for or why it failed.
	Message string
}

// InstanceMetadata is what kro keeps on an instance: its labels (kro's and the ApplySet parent
// id), the finalizer, and the ApplySet inventory.
type InstanceMetadata struct {
	Labels    map[string]string
	Finalizer string
	// Annotations is the ApplySet inventory to write before applying Children: the group-kinds
	// and namespaces of Children together with those the instance already lists, so that an
	// interrupted pass never forgets where its older objects are.
	Annotations map[string]string
	// AnnotationsAfterPrune is the inventory once the prune Prune allows has removed every
	// older object: only what Children hold.
	AnnotationsAfterPrune map[string]string
}

// Evaluate runs kro's runtime for instance: in topological order it decides each resource's
// inclusion (includeWhen), resolves its template from the instance and the observed
// dependencies, looks up what exists (observer), and checks readiness (readyWhen). It then
// computes the instance's status as kro's instance controller would write it.
//
// The instance should be as the cluster serves it (defaulted by the CRD). Neither it nor the
// observed objects are modified.
func Evaluate(c *Compiled, instance *unstructured.Unstructured, observer Observer) (*Plan, error) {
	if instance.GetDeletionTimestamp() != nil {
		return nil, ErrInstanceDeleting
	}
	inst := instance.DeepCopy()
	rt, err := runtime.FromGraph(c.graph, c.config.graphConfig(), runtime.WithInstance(inst))
	if err != nil {
		return nil, fmt.Errorf("kro runtime: %w", err)
	}
	e := &evaluation{
		compiled:   c,
		rt:         rt,
		instance:   inst,
		observer:   observer,
		applySetID: applyset.ID(inst),
		states: &instancectrl.StateManager{
			State:      v1alpha1.InstanceStateInProgress,
			NodeStates: map[string]*instancectrl.NodeState{},
		},
		plan: &Plan{},
	}
	e.plan.Instance.Labels = c.InstanceLabels()
	e.plan.Instance.Labels[ApplySetIDLabel] = e.applySetID
	e.plan.Instance.Finalizer = Finalizer

	inventoryErr := e.invalidInventory()
	switch {
	case inventoryErr != nil:
		e.plan.Err = inventoryErr
	case v1alpha1.IsReconcileSuspended(inst.GetAnnotations()[ReconcileAnnotation]):
		e.plan.Suspended = true
	default:
		e.walk()
	}
	if e.plan.Err == nil && !e.plan.Suspended {
		e.inventory()
	}
	if e.plan.Err != nil {
		e.plan.Children = nil
	}
	if e.plan.Instance.Annotations == nil && !hasAnyInventory(inst) {
		// kro installs an empty inventory with its finalizer, so that deletion can always
		// proceed even if no pass ever gets as far as the children.
		empty := applyset.Metadata{ID: e.applySetID, Tooling: ToolingID, GroupKinds: sets.New[schema.GroupKind](), AdditionalNamespaces: sets.New[string]()}
		e.plan.Instance.Annotations = empty.Annotations()
	}
	e.plan.Prune = e.plan.Err == nil && !e.plan.Suspended && e.firstPending == nil && !e.refused
	if err := e.status(); err != nil {
		return nil, err
	}
	return e.plan, nil
}

type evaluation struct {
	compiled   *Compiled
	rt         *runtime.Runtime
	instance   *unstructured.Unstructured
	observer   Observer
	applySetID string
	states     *instancectrl.StateManager
	plan       *Plan

	// resources are the applyset inputs, for the inventory (kro's ApplySet.Project).
	resources []applyset.Resource
	// firstPending is the first data-pending error: it holds pruning.
	firstPending error
	// refused is set when a child was left out because it belongs to another ApplySet: kro
	// counts that as an apply error, which holds pruning.
	refused bool
}

// invalidInventory mirrors kro's guard before it installs its finalizer: an instance without
// the finalizer that carries any ApplySet metadata must carry all of it, consistently, or kro
// refuses to manage it rather than replace an inventory that may list live objects.
func (e *evaluation) invalidInventory() error {
	if hasFinalizer(e.instance) || !hasAnyInventory(e.instance) {
		return nil
	}
	if err := applyset.ValidateParentInventory(e.instance); err != nil {
		return fmt.Errorf("%w; repair the metadata, or remove it only after confirming no managed members remain: %w",
			errInventory, err)
	}
	return nil
}

// walk is kro's processNodes, with reads answered by the Observer and the apply left to the
// caller.
func (e *evaluation) walk() {
	for _, node := range e.rt.Nodes() {
		id := node.Spec.Meta.ID
		order, ok := e.rt.ApplyOrder(id)
		if !ok {
			order = 0 // kro's fallback: removed in the last wave
		}
		result, err := e.node(node, order)
		result.ID = id
		e.plan.Nodes = append(e.plan.Nodes, result)
		e.states.SetNodeState(id, instancectrl.NodeState{State: v1alpha1.NodeState(result.State), Err: nodeErr(result)})
		if err != nil {
			e.plan.Err = err
			return
		}
	}
}

// nodeErr is the error kro keeps with a node state: only a failure or a wait for readiness.
func nodeErr(r NodeResult) error {
	if r.State != string(v1alpha1.NodeStateError) && r.State != string(v1alpha1.NodeStateWaitingForReadiness) {
		return nil
	}
	return errors.New(r.Message)
}

// node evaluates one resource. A returned error stops the walk.
func (e *evaluation) node(node *runtime.Node, order int) (NodeResult, error) {
	ignored, err := node.IsIgnored()
	if err != nil {
		return e.failed(node, err)
	}
	if ignored {
		e.resources = append(e.resources, applyset.Resource{ID: node.Spec.Meta.ID, SkipApply: true})
		return NodeResult{State: string(v1alpha1.NodeStateSkipped), Excluded: true}, nil
	}
	desired, err := node.GetDesired()
	if err != nil {
		return e.failed(node, err)
	}
	switch node.Spec.Meta.Type {
	case graph.NodeTypeExternal:
		return e.external(node, desired)
	case graph.NodeTypeExternalCollection:
		return e.externalCollection(node, desired)
	case graph.NodeTypeCollection:
		return e.collection(node, desired, order)
	default:
		return e.resource(node, desired, order)
	}
}

// failed reports an evaluation error: data pending waits, anything else stops the walk.
func (e *evaluation) failed(node *runtime.Node, err error) (NodeResult, error) {
	if runtime.IsDataPending(err) {
		err = fmt.Errorf("gvr %q: %w", node.Spec.Meta.GVR.String(), err)
		if e.firstPending == nil {
			e.firstPending = err
		}
		return NodeResult{State: string(v1alpha1.NodeStateInProgress), Pending: true, Message: err.Error()}, nil
	}
	return errorResult(err), err
}

func errorResult(err error) NodeResult {
	return NodeResult{State: string(v1alpha1.NodeStateError), Message: err.Error()}
}

// resource is one templated object.
func (e *evaluation) resource(node *runtime.Node, desired []*unstructured.Unstructured, order int) (NodeResult, error) {
	if len(desired) == 0 {
		return NodeResult{State: string(v1alpha1.NodeStateSynced), Ready: true}, nil
	}
	want := desired[0]
	live, err := e.one(node, want)
	if err != nil {
		return errorResult(err), err
	}
	if live != nil && live.GetDeletionTimestamp() != nil {
		err := deletingError(node.Spec.Meta.ID, live)
		return NodeResult{State: string(v1alpha1.NodeStateDeleting), Message: err.Error()}, err
	}
	if live != nil {
		node.SetObserved([]*unstructured.Unstructured{live})
	}
	obj := want.DeepCopy()
	decorateChild(obj, e.instance, e.compiled.Namespaced(), node.Spec.Meta.ID, order, nil, e.applySetID)
	if err := e.conflict(obj, live); err != nil {
		return errorResult(err), nil
	}
	e.add(node.Spec.Meta.ID, node.Spec.Meta.ID, order, obj, live)
	if live == nil {
		return NodeResult{State: string(v1alpha1.NodeStateInProgress), Message: "to be created"}, nil
	}
	return readiness(node), nil
}

// collection is a forEach: every item is a child, labelled with its position.
func (e *evaluation) collection(node *runtime.Node, desired []*unstructured.Unstructured, order int) (NodeResult, error) {
	id := node.Spec.Meta.ID
	existing, err := e.observer.Observe(Query{
		Kind:     node.Spec.Template.GroupVersionKind(),
		Resource: node.Spec.Meta.GVR,
		Selector: labels.SelectorFromSet(labels.Set{InstanceIDLabel: string(e.instance.GetUID()), NodeIDLabel: id}),
	})
	if err != nil {
		err = fmt.Errorf("failed to list collection items: %w", err)
		return errorResult(err), err
	}
	existing = listed(existing)
	if len(desired) == 0 {
		node.SetObserved(existing)
		return NodeResult{State: string(v1alpha1.NodeStateSynced), Ready: true}, nil
	}
	byKey := make(map[string]*unstructured.Unstructured, len(existing))
	for _, obj := range existing {
		byKey[obj.GetNamespace()+"/"+obj.GetName()] = obj
	}
	for _, want := range desired {
		if live := byKey[want.GetNamespace()+"/"+want.GetName()]; live != nil && live.GetDeletionTimestamp() != nil {
			err := deletingError(id, live)
			return NodeResult{State: string(v1alpha1.NodeStateDeleting), Message: err.Error()}, err
		}
	}
	node.SetObserved(existing)
	missing := 0
	var refused error
	for i, want := range desired {
		live := byKey[want.GetNamespace()+"/"+want.GetName()]
		obj := want.DeepCopy()
		decorateChild(obj, e.instance, e.compiled.Namespaced(), id, order, &collectionItem{index: i, size: len(desired)}, e.applySetID)
		if err := e.conflict(obj, live); err != nil {
			refused = fmt.Errorf("collection item %d: %w", i, err)
			continue
		}
		if live == nil {
			missing++
		}
		e.add(id, fmt.Sprintf("%s-%d", id, i), order, obj, live)
	}
	switch {
	case refused != nil:
		return errorResult(refused), nil
	case missing > 0:
		return NodeResult{State: string(v1alpha1.NodeStateInProgress), Message: fmt.Sprintf("%d of %d items to be created", missing, len(desired))}, nil
	}
	return readiness(node), nil
}

// listed makes an empty answer an empty list: kro's runtime reads a nil observation as "not
// observed yet", which would hide an empty collection from the expressions that count it.
func listed(items []*unstructured.Unstructured) []*unstructured.Unstructured {
	if items == nil {
		return []*unstructured.Unstructured{}
	}
	return items
}

// external is an externalRef by name: read, never applied.
func (e *evaluation) external(node *runtime.Node, desired []*unstructured.Unstructured) (NodeResult, error) {
	if len(desired) == 0 {
		return NodeResult{State: string(v1alpha1.NodeStateSkipped)}, nil
	}
	live, err := e.one(node, desired[0])
	if err != nil {
		return errorResult(err), err
	}
	if live == nil {
		return NodeResult{
			State:   string(v1alpha1.NodeStateWaitingForReadiness),
			Message: fmt.Sprintf("waiting for external reference %q: not found", node.Spec.Meta.ID),
		}, nil
	}
	node.SetObserved([]*unstructured.Unstructured{live})
	return e.externalReadiness(node, "external reference")
}

// externalCollection is an externalRef by selector: a list, read, never applied.
func (e *evaluation) externalCollection(node *runtime.Node, desired []*unstructured.Unstructured) (NodeResult, error) {
	if len(desired) == 0 {
		return NodeResult{State: string(v1alpha1.NodeStateSkipped)}, nil
	}
	selector, err := externalSelector(node.Spec.Meta.ID, desired[0])
	if err != nil {
		return errorResult(err), err
	}
	namespace := desired[0].GetNamespace()
	if !node.Spec.Meta.Namespaced {
		namespace = ""
	}
	items, err := e.observer.Observe(Query{
		Kind: node.Spec.Template.GroupVersionKind(), Resource: node.Spec.Meta.GVR, Namespace: namespace, Selector: selector,
	})
	if err != nil {
		err = fmt.Errorf("failed to list external collection %s: %w", node.Spec.Meta.ID, err)
		return errorResult(err), err
	}
	node.SetObserved(listed(items))
	return e.externalReadiness(node, "external collection")
}

func (e *evaluation) externalReadiness(node *runtime.Node, what string) (NodeResult, error) {
	if err := node.CheckReadiness(); err != nil {
		if errors.Is(err, runtime.ErrWaitingForReadiness) {
			return NodeResult{
				State:   string(v1alpha1.NodeStateWaitingForReadiness),
				Message: fmt.Sprintf("waiting for %s %q: %v", what, node.Spec.Meta.ID, err),
			}, nil
		}
		return errorResult(err), err
	}
	return NodeResult{State: string(v1alpha1.NodeStateSynced), Ready: true}, nil
}

// readiness is kro's setStateFromReadiness for a node whose objects all exist.
func readiness(node *runtime.Node) NodeResult {
	if err := node.CheckReadiness(); err != nil {
		if errors.Is(err, runtime.ErrWaitingForReadiness) {
			return NodeResult{
				State:   string(v1alpha1.NodeStateWaitingForReadiness),
				Message: fmt.Errorf("waiting for node %q: %w", node.Spec.Meta.ID, err).Error(),
			}
		}
		return errorResult(err)
	}
	return NodeResult{State: string(v1alpha1.NodeStateSynced), Ready: true}
}

// one looks up the object a resource names.
func (e *evaluation) one(node *runtime.Node, want *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	found, err := e.observer.Observe(Query{
		Kind: want.GroupVersionKind(), Resource: node.Spec.Meta.GVR, Namespace: want.GetNamespace(), Name: want.GetName(),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to get current state for %s/%s: %w", want.GetNamespace(), want.GetName(), err)
	}
	if len(found) == 0 {
		return nil, nil
	}
	return found[0], nil
}

// conflict is kro's ApplySet membership check: an object that belongs to another ApplySet is
// never taken over.
func (e *evaluation) conflict(obj, live *unstructured.Unstructured) error {
	if live == nil {
		return nil
	}
	current := live.GetLabels()[ApplySetPartOfLabel]
	if current == "" || current == e.applySetID {
		return nil
	}
	e.refused = true
	return &applyset.ApplySetConflictError{
		ResourceName:      obj.GetName(),
		ResourceNamespace: obj.GetNamespace(),
		ResourceGVK:       obj.GroupVersionKind().String(),
		CurrentApplySetID: current,
		DesiredApplySetID: e.applySetID,
	}
}

func (e *evaluation) add(nodeID, itemID string, order int, obj, live *unstructured.Unstructured) {
	e.plan.Children = append(e.plan.Children, Child{NodeID: nodeID, ApplyOrder: order, Object: obj, Live: live})
	e.resources = append(e.resources, applyset.Resource{ID: itemID, Object: obj, Current: live})
}

// inventory computes the instance's ApplySet metadata with kro's own ApplySet, which also
// refuses two resources naming the same object.
func (e *evaluation) inventory() {
	mapper := e.compiled.scopes
	superset, err := applyset.New(applyset.Config{RESTMapper: mapper, ParentNamespace: e.instance.GetNamespace()}, e.instance).
		Project(e.resources)
	if err != nil {
		e.plan.Err = err
		return
	}
	bare := e.instance.DeepCopy()
	bare.SetAnnotations(nil)
	exact, err := applyset.New(applyset.Config{RESTMapper: mapper, ParentNamespace: e.instance.GetNamespace()}, bare).
		Project(e.resources)
	if err != nil {
		e.plan.Err = err
		return
	}
	superset.Tooling, exact.Tooling = ToolingID, ToolingID
	e.plan.Instance.Annotations = superset.Annotations()
	e.plan.Instance.AnnotationsAfterPrune = exact.Annotations()
}

// scopeMapper maps the graph's kinds as the target cluster did at compile time; the ApplySet
// only needs to know which kinds are namespaced.
func scopeMapper(nodes []NodeInfo) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, n := range nodes {
		scope := meta.RESTScopeRoot
		if n.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.AddSpecific(n.Kind, n.Resource, n.Resource.GroupVersion().WithResource(n.Resource.Resource), scope)
	}
	return m
}

// deletingError says that a child is terminating: kro waits for it to be gone before it
// applies anything again.
func deletingError(nodeID string, live *unstructured.Unstructured) error {
	ref := live.GetName()
	if live.GetNamespace() != "" {
		ref = live.GetNamespace() + "/" + ref
	}
	return &ResourceDeletingError{NodeID: nodeID, Object: ref}
}

// ResourceDeletingError says that a child of the instance is being deleted; the instance waits.
type ResourceDeletingError struct {
	NodeID string
	Object string
}

func (e *ResourceDeletingError) Error() string {
	return fmt.Sprintf("resource %q for node %q is currently being deleted; waiting for deletion to complete before continuing reconciliation",
		e.Object, e.NodeID)
}

func hasFinalizer(obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetFinalizers() {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// hasAnyInventory detects partial ApplySet metadata on purpose: any of it means an inventory
// existed, which must then be valid.
func hasAnyInventory(obj *unstructured.Unstructured) bool {
	if _, ok := obj.GetLabels()[ApplySetIDLabel]; ok {
		return true
	}
	annotations := obj.GetAnnotations()
	for _, key := range []string{ApplySetToolingAnnotation, ApplySetGroupKindsAnnotation, ApplySetNamespacesAnnotation, ApplySetInventoryHashAnnotation} {
		if _, ok := annotations[key]; ok {
			return true
		}
	}
	return false
}
