package kro

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	instancectrl "github.com/kubernetes-sigs/kro/pkg/controller/instance"
	"github.com/kubernetes-sigs/kro/pkg/controller/instance/applyset"
)

// DeletionInventory returns the group-kinds an instance being deleted lists in its ApplySet
// inventory: where its resources are to be looked for, from the persisted metadata alone (no
// graph, no CEL), as kro deletes. The inventory is validated as kro validates it; an invalid
// one is an error, never guessed around.
func DeletionInventory(instance *unstructured.Unstructured) ([]schema.GroupKind, error) {
	if err := applyset.ValidateParentInventory(instance); err != nil {
		return nil, fmt.Errorf("validate deletion inventory: %w", err)
	}
	return InventoryKinds(instance.GetAnnotations())
}

// InventoryKinds returns the group-kinds ApplySet annotations list (an instance's, or
// Plan.Instance.Annotations), sorted.
func InventoryKinds(annotations map[string]string) ([]schema.GroupKind, error) {
	parent := &unstructured.Unstructured{}
	parent.SetAnnotations(annotations)
	md, err := applyset.New(applyset.Config{}, parent).Project(nil)
	if err != nil {
		return nil, fmt.Errorf("read the ApplySet inventory: %w", err)
	}
	out := md.GroupKinds.UnsortedList()
	slices.SortFunc(out, func(a, b schema.GroupKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}

// DeletingStatus is the status kro writes on an instance being deleted: state DELETING and
// ResourcesReady Unknown (UnderDeletion), saying "deleting resources" or, with blocked, why
// deletion waits. The RGD's status fields are kept as the instance shows them: nothing is
// evaluated during deletion. With author conditions (the RGD declares status.conditions) they
// are kept too, with kro's ResourcesReady over them.
func DeletingStatus(instance *unstructured.Unstructured, authorConditions bool, blocked error) map[string]any {
	inst := instance.DeepCopy()
	wire, _, _ := unstructured.NestedMap(instance.Object, "status")
	mark := instancectrl.NewConditionsMarkerFor(inst)
	if blocked != nil {
		mark.ResourcesUnderDeletion("deletion blocked: %v", blocked)
	} else {
		mark.ResourcesUnderDeletion("deleting resources")
	}
	builtin := builtinConditions(&conditionedObject{inst})
	status := map[string]any{"conditions": encodeConditions(builtin), "state": StateDeleting}
	for k, v := range wire {
		if k != "conditions" && k != "state" {
			status[k] = v
		}
	}
	if authorConditions {
		var current []v1alpha1.Condition
		for _, c := range builtin {
			if string(c.Type) == instancectrl.ResourcesReady {
				current = append(current, c)
			}
		}
		previous, _ := wire["conditions"].([]any)
		status["conditions"] = encodeConditions(keepPrevious(current, decodeConditions(previous)))
	}
	return status
}

// Hold reports the instance as not ready, with state (IN_PROGRESS or ERROR) and why, although
// this pass may have found its resources ready: what the cluster shows of them is not yet
// what is being applied (the caller applies through a pipeline of its own, and its cache
// catches up later), or the caller's apply failed. kro's conditions keep their shape:
// ResourcesReady False (NotReady) with message, and Ready following it; when the RGD declares
// author conditions only the state changes, as kro writes only those then.
func (p *Plan) Hold(instance *unstructured.Unstructured, state, message string) {
	if p.Status == nil {
		return
	}
	p.State = state
	p.Status["state"] = state
	if p.authorConditions {
		return
	}
	inst := instance.DeepCopy()
	set := instanceConditions.For(&conditionedObject{inst})
	planned, _ := p.Status["conditions"].([]any)
	for _, c := range decodeConditions(planned) {
		if string(c.Type) == instancectrl.InstanceManaged || string(c.Type) == instancectrl.GraphResolved {
			set.Set(c)
		}
	}
	instancectrl.NewConditionsMarkerFor(inst).ResourcesNotReady("%s", message)
	p.Status["conditions"] = encodeConditions(builtinConditions(&conditionedObject{inst}))
}
