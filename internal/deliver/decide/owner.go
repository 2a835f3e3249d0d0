package decide

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// ErrConflict marks an object that belongs to someone else. It is permanent: the same object
// is refused again until its owner on the cluster, or the strategy, changes.
var ErrConflict = errors.New("conflict")

// ErrHeld marks an object another Flotilla owner holds. It is a conflict: the object keeps its
// owner until that owner lets go of it (stops delivering it here, or is deleted), whatever the
// owners' names, so a newcomer can never take an object from an incumbent. The deliverer
// wakes the owners refused this way when the holder lets go.
var ErrHeld = fmt.Errorf("%w: held by another owner", ErrConflict)

// ErrMarksDisagree marks an object whose owner label is this owner's while its owner
// annotation names another: Flotilla never writes such marks, so someone on the cluster did,
// and the object is no one's to take.
var ErrMarksDisagree = fmt.Errorf("%w: its owner label and annotation name different owners", ErrConflict)

// checkOwner refuses to touch a live object that is not this owner's, unless the strategy
// adopts objects Flotilla did not create, or this one by its mark. The owner label is what
// marks an object as Flotilla's (render.Managed), and the two marks must agree: an object is
// this owner's when its label is, and its annotation names no other owner; the annotation,
// which names the owner in full, also recognises the owner's own object when its label was
// removed on the cluster, but never one whose label names another owner.
func checkOwner(live metav1.Object, owner render.Owner, s Strategy) error {
	labels := live.GetLabels()
	annotated := live.GetAnnotations()[flotillav1.AnnotationOwner]
	switch {
	case labels[flotillav1.LabelOwner] == owner.LabelValue():
		if annotated != "" && annotated != owner.String() {
			return fmt.Errorf("%w (%s); it is left alone", ErrMarksDisagree, annotated)
		}
		return nil
	case render.Managed(labels) && (labels[flotillav1.LabelOwner] != "" || annotated != owner.String()):
		// First owner wins: an object keeps its owner until that owner lets go of it. The
		// label names the holder; the annotation names it in full unless it was forged.
		holder := annotated
		if holder == owner.String() {
			holder = ""
		}
		return fmt.Errorf("%w (%s); it keeps the object until it stops delivering it here or is deleted",
			ErrHeld, orUnknown(holder))
	case annotated == owner.String():
		return nil // Flotilla's own object, its owner label removed on the cluster
	case s.Conflict == flotillav1.ConflictAdopt, s.AdoptMarked.On(labels):
		return nil
	default:
		return fmt.Errorf("%w: exists on the cluster and was not created by Flotilla; set strategy.conflict: Adopt to take it over", ErrConflict)
	}
}

// Holds reports whether a live object carries this owner's label, which every object the owner
// applied carries. Only such an object can have drifted from what the owner applied, so a
// caller compares an object's content (which may cost a dry run) only when Holds says so.
func Holds(live metav1.Object, owner render.Owner) bool {
	return live.GetLabels()[flotillav1.LabelOwner] == owner.LabelValue()
}

// Owned reports whether an object found on a cluster is one of owner's, as pruning counts them:
// it carries the owner's label, which lists select by, and names the owner in its annotation.
// The label is a short hash of the owner; the annotation makes sure a prune never deletes
// another owner's object whose label happens to be equal.
func Owned(obj metav1.Object, owner render.Owner) bool {
	return Holds(obj, owner) && obj.GetAnnotations()[flotillav1.AnnotationOwner] == owner.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "another owner"
	}
	return s
}
