package kro

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
)

// invalidInventory mirrors kro's guard before it installs its finalizer: an instance without
// the finalizer that carries any ApplySet metadata must carry all of it, consistently, or kro
// refuses to manage it rather than replace an inventory that may list live objects.
func (e *evaluation) invalidInventory() error {
	if hasFinalizer(e.instance) || !hasAnyInventory(e.instance) {
		return nil
	}
	if err := applyset.ValidateParentInventory(e.instance); err != nil {
		return fmt.Errorf("%w; repair the metadata, or remove it only after confirming no managed members remain: %w",
			ErrInvalidInventory, err)
	}
	return nil
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
