package kro

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// ErrInvalidInventory marks an instance kro refuses to manage because its ApplySet metadata is
// partial or inconsistent (Plan.Err): its finalizer and metadata must not be written either.
var ErrInvalidInventory = errors.New("cannot install finalizer with invalid ApplySet inventory")

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

	// authorConditions says the RGD declares status.conditions (see Hold).
	authorConditions bool
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
//
// Its CEL runs under limits (limits.go): each expression's cost, the evaluation's total, and
// ctx, whose end interrupts what runs. A pass stopped by one has Err matching ErrCELLimit, and
// the state ERROR, as kro shows any failed expression.
func Evaluate(ctx context.Context, c *Compiled, instance *unstructured.Unstructured, observer Observer) (*Plan, error) {
	if instance.GetDeletionTimestamp() != nil {
		return nil, ErrInstanceDeleting
	}
	inst := instance.DeepCopy()
	limits := &limiter{ctx: ctx, programs: c.limited, limit: c.config.CELCostLimit, budget: c.config.CELCostBudget}
	rt, err := runtime.FromGraph(limits.graph(c.graph), c.config.graphConfig(), runtime.WithInstance(inst))
	if err != nil {
		return nil, fmt.Errorf("kro runtime: %w", err)
	}
	e := &evaluation{
		compiled:   c,
		rt:         rt,
		limits:     limits,
		instance:   inst,
		observer:   observer,
		applySetID: applyset.ID(inst),
		states: &instancectrl.StateManager{
			State:      v1alpha1.InstanceStateInProgress,
			NodeStates: map[string]*instancectrl.NodeState{},
		},
		plan: &Plan{authorConditions: c.HasAuthorConditions()},
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
	compiled *Compiled
	rt       *runtime.Runtime
	limits   *limiter
	// fieldsStopped says a CEL limit stopped the status fields (statusFields).
	fieldsStopped bool
	instance      *unstructured.Unstructured
	observer      Observer
	applySetID    string
	states        *instancectrl.StateManager
	plan          *Plan

	// resources are the applyset inputs, for the inventory (kro's ApplySet.Project).
	resources []applyset.Resource
	// firstPending is the first data-pending error: it holds pruning.
	firstPending error
	// refused is set when a child was left out because it belongs to another ApplySet: kro
	// counts that as an apply error, which holds pruning.
	refused bool
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
