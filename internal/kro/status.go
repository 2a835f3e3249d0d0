package kro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubernetes-sigs/kro/api/v1alpha1"
	"github.com/kubernetes-sigs/kro/pkg/apis"
	"github.com/kubernetes-sigs/kro/pkg/cel/library"
	instancectrl "github.com/kubernetes-sigs/kro/pkg/controller/instance"
)

// instanceConditions is kro's condition set for instances: Ready, rolled up from
// InstanceManaged, GraphResolved and ResourcesReady.
var instanceConditions = apis.NewReadyConditions(instancectrl.InstanceManaged, instancectrl.GraphResolved, instancectrl.ResourcesReady)

// status computes the status kro's instance controller would write after this pass: its
// conditions markers, its state machine, the RGD's CEL status fields and author conditions.
func (e *evaluation) status() error {
	inst := e.instance
	wire, _, _ := unstructured.NestedMap(inst.Object, "status")
	fields, err := e.statusFields()
	if err != nil {
		return err
	}
	mark := instancectrl.NewConditionsMarkerFor(inst)

	var deleting *ResourceDeletingError
	switch {
	case e.plan.Err != nil && errors.Is(e.plan.Err, ErrInvalidInventory):
		mark.InstanceNotManaged("finalizer/labeling failed: %v", e.plan.Err)
	default:
		mark.InstanceManaged()
		mark.GraphResolved()
		switch {
		case e.plan.Suspended:
			mark.ReconciliationSuspended("reconciliation suspended via %s annotation", ReconcileAnnotation)
		case errors.As(e.plan.Err, &deleting):
			mark.ResourcesDeleting("%v", deleting)
		case e.plan.Err != nil:
			mark.ResourcesNotReady("resource reconciliation failed: %v", e.plan.Err)
		default:
			e.markResources(mark)
		}
	}
	e.states.Update()

	conditioned := &conditionedObject{inst}
	status := map[string]any{"conditions": encodeConditions(builtinConditions(conditioned))}
	if instanceConditions.For(conditioned).IsRootReady() {
		status["state"] = string(v1alpha1.InstanceStateActive)
	} else {
		status["state"] = string(e.states.State)
	}
	if e.fieldsStopped {
		status["state"] = string(v1alpha1.InstanceStateError) // no resource failed, the pass did
	}

	for k, v := range fields {
		if k != "conditions" && k != "state" {
			status[k] = v
		}
	}

	instanceNode := e.rt.Instance()

	if instanceNode.HasConditions() {
		authored, incomplete, evalErr := instanceNode.EvaluateConditions(logr.Discard(), builtinConditions(conditioned))
		rawPrevious, _ := wire["conditions"].([]any)
		previous := decodeConditions(rawPrevious)
		stamped := stampAuthorConditions(authored, previous, inst.GetGeneration())
		if incomplete {
			stamped = keepPrevious(stamped, previous)
		}
		status["conditions"] = encodeConditions(stamped)
		if evalErr != nil {
			status["state"] = string(v1alpha1.InstanceStateError)
		}
	}

	e.plan.State, _ = status["state"].(string)
	e.plan.Status = status
	return nil
}

// statusFields evaluates the RGD's status fields. A field over a CEL limit stops the pass like a
// failed resource (Err, nothing applied, no prune) and leaves the fields out; any other failure
// is kro's and is returned.
func (e *evaluation) statusFields() (map[string]any, error) {
	desired, err := e.rt.Instance().GetDesired()
	switch {
	case err != nil && e.limits.err() != nil:
		if e.plan.Err == nil {
			e.plan.Err = fmt.Errorf("instance status fields: %w", err)
		}
		e.plan.Children, e.plan.Prune, e.fieldsStopped = nil, false, true
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("instance status fields: %w", err)
	}
	fields, _, _ := unstructured.NestedMap(desired[0].Object, "status")
	return fields, nil
}

// markResources sets ResourcesReady after a walk that was not stopped, with kro's reasons. The
// node errors are joined in topological order, not in kro's map order, so that the same state
// always gives the same message and an unchanged status is never rewritten.
func (e *evaluation) markResources(mark *instancectrl.ConditionsMarker) {
	var nodeErrs, creating []string
	for _, n := range e.plan.Nodes {
		switch {
		case n.State == string(v1alpha1.NodeStateWaitingForReadiness) || n.State == string(v1alpha1.NodeStateError):
			nodeErrs = append(nodeErrs, n.Message)
		case n.State == string(v1alpha1.NodeStateInProgress) && !n.Pending:
			creating = append(creating, n.ID)
		}
	}
	switch {
	case len(nodeErrs) > 0:
		mark.ResourcesNotReady("resource reconciliation failed: apply results contain errors: %s", strings.Join(nodeErrs, "\n"))
		return
	case e.firstPending != nil:
		mark.ResourcesNotReady("resource reconciliation failed: waiting for unresolved resource: %v", e.firstPending)
		return
	}
	e.states.Update()
	switch e.states.State {
	case v1alpha1.InstanceStateActive:
		mark.ResourcesReady()
	case v1alpha1.InstanceStateError:
		mark.ResourcesNotReady("resource error: %s", strings.Join(nodeErrs, "\n"))
	default:
		mark.ResourcesNotReady("awaiting resource readiness: %s to be applied", strings.Join(creating, ", "))
	}
}

// conditionedObject gives an instance kro's condition accessors over status.conditions.
type conditionedObject struct{ *unstructured.Unstructured }

func (o *conditionedObject) GetConditions() []v1alpha1.Condition {
	raw, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	return decodeConditions(raw)
}

func (o *conditionedObject) SetConditions(conditions []v1alpha1.Condition) {
	_ = unstructured.SetNestedSlice(o.Object, encodeConditions(conditions), "status", "conditions")
}

// builtinConditions are kro's own conditions of the instance, without author conditions.
func builtinConditions(o *conditionedObject) []v1alpha1.Condition {
	var out []v1alpha1.Condition
	for _, c := range instanceConditions.For(o).List() {
		if _, ok := v1alpha1.KROBuiltinConditionTypes[string(c.Type)]; ok {
			out = append(out, c)
		}
	}
	return out
}

// stampAuthorConditions turns author conditions into API conditions at generation, keeping a
// condition's transition time while its status holds.
func stampAuthorConditions(authored []library.Condition, previous []v1alpha1.Condition, generation int64) []v1alpha1.Condition {
	byType := make(map[string]v1alpha1.Condition, len(previous))
	for _, p := range previous {
		byType[string(p.Type)] = p
	}
	now := metav1.Now()
	out := make([]v1alpha1.Condition, 0, len(authored))
	for _, a := range authored {
		c := v1alpha1.Condition{
			Type:               v1alpha1.ConditionType(a.ConditionType),
			Status:             metav1.ConditionStatus(a.Status),
			Reason:             optional(a.Reason),
			Message:            optional(a.Message),
			ObservedGeneration: generation,
			LastTransitionTime: &now,
		}
		if p, ok := byType[a.ConditionType]; ok && string(p.Status) == a.Status && p.LastTransitionTime != nil {
			c.LastTransitionTime = p.LastTransitionTime
		}
		out = append(out, c)
	}
	return out
}

// keepPrevious keeps the previously written conditions of the types this pass did not produce.
func keepPrevious(current, previous []v1alpha1.Condition) []v1alpha1.Condition {
	have := make(map[v1alpha1.ConditionType]bool, len(current))
	for _, c := range current {
		have[c.Type] = true
	}
	for _, p := range previous {
		if !have[p.Type] {
			current = append(current, p)
		}
	}
	return current
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func decodeConditions(raw []any) []v1alpha1.Condition {
	out := make([]v1alpha1.Condition, 0, len(raw))
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c v1alpha1.Condition
		if k8sruntime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

func encodeConditions(conditions []v1alpha1.Condition) []any {
	out := make([]any, 0, len(conditions))
	for i := range conditions {
		if raw, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i]); err == nil {
			out = append(out, raw)
		}
	}
	return out
}
