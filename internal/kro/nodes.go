package kro

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
	"github.com/kubernetes-sigs/kro/pkg/runtime"
)

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
