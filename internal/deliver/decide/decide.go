package decide

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Action is what a delivery does with one desired object.
type Action string

// Actions. Create, Update and Correct write the object; the others do not.
const (
	// Create: the object does not exist on the cluster; it is created.
	Create Action = "create"
	// Update: the object exists and is written: its desired state changed (another hash), or
	// it is taken over (adopted, or Flotilla's own object found without its owner label
	// before a delivery confirmed it here).
	Update Action = "update"
	// Correct: the object was changed, deleted or unlabelled on the cluster after a delivery,
	// and its drift policy corrects that: it is written again. Fields or Deleted say what
	// changed.
	Correct Action = "correct"
	// Unchanged: the object is as desired; nothing is written.
	Unchanged Action = "unchanged"
	// Skip: the object exists and its mode is ApplyOnce, which never updates an object; any
	// Fields in which it differs are reported as drift, whatever the drift policy.
	Skip Action = "skip"
	// Left: the object was changed on the cluster, and drift policy Report (or, for a lost
	// label, mode ApplyOnce) leaves it so; the change is reported.
	Left Action = "left"
	// Ignored: the object was changed on the cluster, and drift policy Ignore leaves it so
	// without a word.
	Ignored Action = "ignored"
	// Conflict: the object belongs to someone else (Err wraps ErrConflict, and ErrHeld when
	// another Flotilla owner holds it).
	Conflict Action = "conflict"
	// Refused: the owner may not deliver the object (Err wraps ErrOutOfScope).
	Refused Action = "refused"
)

// Writes reports whether the action writes the object to the cluster.
func (a Action) Writes() bool { return a == Create || a == Update || a == Correct }

// Live is what a cluster holds under a desired object's name, as the caller found it.
type Live struct {
	// Scope is the scope of the object's kind in the cluster's REST mapping. It is read only
	// when the owner is namespaced (see CheckScope).
	Scope meta.RESTScopeName
	// Object is the live object, or its metadata alone; nil when it does not exist. (Mind that
	// a nil pointer in the interface is not nil.)
	Object metav1.Object
	// Drift are the JSON pointers at which the live object differs from what the owner
	// applied, fields the owner ignores left out; nil when it does not differ. It is read only
	// when the object Holds the owner's label: a caller compares only then.
	Drift []string
	// Known says an earlier delivery confirmed the object on this cluster, so finding it
	// missing, or without its owner label, is a change made there rather than a first
	// delivery. A caller that cannot tell (plan) leaves it false.
	Known bool
}

// Decision is what a delivery does with one desired object.
type Decision struct {
	Action Action
	// Err says why, for Conflict and Refused.
	Err error
	// Fields and Deleted are the change made on the cluster that a Correct decision corrects,
	// or a Left or Skip one leaves and reports: JSON pointers of the fields that differ, or
	// that the object was deleted.
	Fields  []string
	Deleted bool
	// Adopt says the write takes over an object Flotilla did not create (strategy.conflict:
	// Adopt): the caller marks it adopted (flotillav1.AnnotationAdopted) first, so that no
	// prune or removal ever deletes it (Kept).
	Adopt bool
}

// labelsPath is the drift of an object of the owner's that lost its owner label on the
// cluster: the label is what makes it the owner's there.
const labelsPath = "/metadata/labels"

// Decide is the apply decision for one desired object of owner on a cluster. The rules apply
// in order: tenancy (the same refusal wherever the object would be), then, for an object that
// exists, ownership, then mode, then the desired hash and drift policy.
func Decide(owner render.Owner, s Strategy, desired *unstructured.Unstructured, live Live) Decision {
	if err := CheckScope(owner, s, desired, live.Scope); err != nil {
		return Decision{Action: Refused, Err: err}
	}
	if _, marked := desired.GetAnnotations()[flotillav1.AnnotationAdopted]; marked {
		return Decision{Action: Refused, Err: ErrAdoptedMark}
	}
	mode, policy := ModeOf(desired, s), DriftOf(desired, s)
	if live.Object == nil {
		if !live.Known {
			return Decision{Action: Create}
		}
		// Deleted on the cluster. ApplyOnce creates what is missing, so it recreates it
		// whatever the drift policy; otherwise the policy decides.
		d := Decision{Action: Correct, Deleted: true}
		if mode != flotillav1.ModeApplyOnce && policy != flotillav1.DriftCorrect {
			d.Action = leave(policy)
		}
		return d
	}
	if err := checkOwner(live.Object, owner, s); err != nil {
		return Decision{Action: Conflict, Err: err}
	}
	if !Holds(live.Object, owner) {
		if !live.Known {
			// Adopted, or Flotilla's own object (by its annotation) that this delivery
			// cannot tell apart from one relabelled before: applying marks it.
			return Decision{Action: Update, Adopt: Adopts(live.Object, owner, s)}
		}
		// Delivered and confirmed here, then unlabelled on the cluster: drift like any
		// other change, except that ApplyOnce, which updates nothing, leaves it too.
		d := Decision{Action: Correct, Fields: []string{labelsPath}}
		if mode == flotillav1.ModeApplyOnce || policy != flotillav1.DriftCorrect {
			d.Action = leave(policy)
		}
		return d
	}
	if mode == flotillav1.ModeApplyOnce {
		return Decision{Action: Skip, Fields: live.Drift}
	}
	if live.Object.GetAnnotations()[flotillav1.AnnotationHash] != desired.GetAnnotations()[flotillav1.AnnotationHash] {
		return Decision{Action: Update}
	}
	// The same desired state as applied before: only a change made on the cluster calls for
	// a write, and only when the policy corrects it.
	if len(live.Drift) == 0 {
		return Decision{Action: Unchanged}
	}
	return Decision{Action: correctOr(policy), Fields: live.Drift}
}

// ErrAdoptedMark refuses a desired object that carries flotillav1.AnnotationAdopted: the
// mark says Flotilla did not create the object and must never delete it, so only Flotilla
// sets it, and an owner that could set or clear it could have Flotilla delete what it adopted.
var ErrAdoptedMark = fmt.Errorf("the annotation %s is Flotilla's own mark of an object it adopted; remove it from the object", flotillav1.AnnotationAdopted)

// Adopts reports whether applying owner's object over live takes over an object Flotilla did
// not create: live carries neither Flotilla's marks of owner nor those of any owner, and the
// strategy adopts (conflict Adopt; objects adopted by their mark, AdoptMarked, are what
// another tool made for the owner, and stay the owner's to delete).
func Adopts(live metav1.Object, owner render.Owner, s Strategy) bool {
	if live.GetAnnotations()[flotillav1.AnnotationAdopted] != "" {
		return true // adopted before: keep the mark
	}
	if render.Managed(live.GetLabels()) || live.GetAnnotations()[flotillav1.AnnotationOwner] == owner.String() {
		return false
	}
	return s.Conflict == flotillav1.ConflictAdopt && !s.AdoptMarked.On(live.GetLabels())
}

// leave is what a policy that does not correct makes of a drift.
func leave(policy flotillav1.DriftPolicy) Action {
	if policy == flotillav1.DriftIgnore {
		return Ignored
	}
	return Left
}

// correctOr is what a policy makes of a drift.
func correctOr(policy flotillav1.DriftPolicy) Action {
	if policy == flotillav1.DriftCorrect {
		return Correct
	}
	return leave(policy)
}
