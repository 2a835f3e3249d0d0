package decide

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Strategy is what of an owner's spec.strategy the decisions read, resolved for one delivery.
// The deliverer's Job embeds it, and `flotilla plan` builds the same one, so both decide from
// the same inputs.
type Strategy struct {
	// Conflict is Adopt to take over an existing object Flotilla did not create; anything
	// else refuses it.
	Conflict flotillav1.ConflictPolicy
	// AdoptMarked, when set, takes over an existing object Flotilla did not create that
	// carries this label, whatever Conflict says: the mark another tool left on what it made
	// for the same thing (kro's, for fleet APIs, so that a cluster that ran kro is taken over
	// without disruption). An object another Flotilla owner holds is never taken.
	AdoptMarked Mark
	// ClusterWide lets an owner on a spoke (an instance of a fleet API an administrator serves
	// with tenancy Cluster) deliver anywhere on its cluster. Only owners on spokes read it: a
	// namespaced owner on the hub (a Propagation, a transparent-mode object) stays confined to
	// its namespace whatever it says.
	ClusterWide bool
	// Mode and Drift are the owner's defaults; the flotilla.dev/mode and flotilla.dev/drift
	// annotations of an object override them. Empty means Reconcile and Correct.
	Mode  flotillav1.ApplyMode
	Drift flotillav1.DriftPolicy
	// Deletion Orphan leaves on the cluster what the owner stops delivering.
	Deletion flotillav1.DeletionPolicy
	// PruneBudget is the largest percentage of the owner's objects on a cluster one delivery
	// may delete; deleting all of them always exceeds it. 0 means every deletion waits for
	// confirmation; Unbudgeted (the removal of an owner from a cluster, which its caller
	// decided) means none does. PruneConfirmed, when it equals ConfirmValue, lifts the budget.
	PruneBudget    int
	PruneConfirmed string
	// ConfirmToken is the flotilla.dev/confirm-prune value that confirms this delivery's
	// prunes: the owner's revision before per-cluster division and overrides, so that one
	// annotation confirms a change on every cluster it reaches. Empty means the delivery's own
	// revision.
	ConfirmToken string
	// ConfirmOn names, as kubectl does ("apipropagation serving"), the object whose
	// flotilla.dev/confirm-prune annotation PruneConfirmed is read from when it is not the
	// owner itself (ConfirmCommand).
	ConfirmOn string
}

// ConfirmValue is the flotilla.dev/confirm-prune value that confirms a delivery of revision
// under s: its ConfirmToken, or the revision itself.
func (s Strategy) ConfirmValue(revision string) string {
	if s.ConfirmToken != "" {
		return s.ConfirmToken
	}
	return revision
}

// Confirmed reports whether the owner's annotation confirms the prunes of a delivery of
// revision.
func (s Strategy) Confirmed(revision string) bool {
	return s.PruneConfirmed != "" && s.PruneConfirmed == s.ConfirmValue(revision)
}

// ModeOf is an object's apply mode: its flotilla.dev/mode annotation when that names a mode,
// else the strategy's. An object can thus be created once among objects that are reconciled.
func ModeOf(obj *unstructured.Unstructured, s Strategy) flotillav1.ApplyMode {
	if m := flotillav1.ApplyMode(obj.GetAnnotations()[flotillav1.AnnotationMode]); m == flotillav1.ModeApplyOnce || m == flotillav1.ModeReconcile {
		return m
	}
	if s.Mode == "" {
		return flotillav1.ModeReconcile
	}
	return s.Mode
}

// DriftOf is an object's drift policy: its flotilla.dev/drift annotation when that names a
// policy, else the strategy's. An unknown annotation value falls back rather than failing
// the object: the policy only decides what happens to changes made on the cluster.
func DriftOf(obj *unstructured.Unstructured, s Strategy) flotillav1.DriftPolicy {
	switch p := flotillav1.DriftPolicy(obj.GetAnnotations()[flotillav1.AnnotationDrift]); p {
	case flotillav1.DriftCorrect, flotillav1.DriftReport, flotillav1.DriftIgnore:
		return p
	}
	if s.Drift == "" {
		return flotillav1.DriftCorrect
	}
	return s.Drift
}

// Mark is a label with its value.
type Mark struct{ Key, Value string }

// On reports whether labels carry the mark; an empty mark is on nothing.
func (m Mark) On(labels map[string]string) bool {
	return m.Key != "" && labels[m.Key] == m.Value
}
