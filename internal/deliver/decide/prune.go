package decide

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// Unbudgeted is the PruneBudget of a delivery that removes an owner from a cluster: the caller
// decided the removal (and holds it when its own input is in doubt), so no deletion of it waits.
const Unbudgeted = -1

// Kept says why an object of the owner's (Owned) that its desired set no longer has stays on
// the cluster, or "" when a prune deletes it. A protected object stays whatever the owner
// wants, so an object can outlive its hub copy; so does an adopted one (strategy.conflict:
// Adopt took it over from whoever made it on the cluster, who may be its administrator); an
// Orphan strategy leaves every such object, unmanaged from then on. Protected objects do not count in OverBudget at all (Leftovers).
func Kept(obj metav1.Object, s Strategy) string {
	switch {
	case protected(obj):
		return "labelled " + flotillav1.LabelProtected
	case obj.GetAnnotations()[flotillav1.AnnotationAdopted] != "":
		return "adopted: it existed before Flotilla delivered it, so Flotilla releases it and never deletes it"
	case s.Deletion == flotillav1.DeletionOrphan:
		return "strategy.deletion is Orphan"
	}
	return ""
}

// OverBudget reports whether a prune of the given revision that deletes stale of the owner's
// owned objects on a cluster must wait for confirmation: it deletes more than the budget's
// share of them, or all of them (a selection gone wrong looks exactly like that), unless this
// very revision (or the owner's change, Strategy.ConfirmToken) was confirmed. A confirmation of an earlier revision does not carry over: a
// different change deserves its own look. Deleting nothing never waits.
func OverBudget(s Strategy, revision string, stale, owned int) bool {
	if stale == 0 || s.PruneBudget == Unbudgeted || s.Confirmed(revision) {
		return false
	}
	return stale >= owned || stale*100 > s.PruneBudget*owned
}

func protected(obj metav1.Object) bool {
	return obj.GetLabels()[flotillav1.LabelProtected] == "true"
}

// InScope reports whether an object found on a cluster lies where owner delivers: in its own
// namespace for a namespaced owner, anywhere for a cluster-scoped one or an owner on a spoke
// whose strategy reaches its whole cluster (Strategy.ClusterWide, as CheckScope honours it).
// Whoever may write a namespace of a spoke may put any label there; an object elsewhere that
// carries a namespaced owner's marks was not delivered by it, and is neither counted nor
// deleted as its.
func InScope(obj metav1.Object, owner render.Owner, s Strategy) bool {
	return owner.Namespace == "" || obj.GetNamespace() == owner.Namespace || (owner.OnSpoke() && s.ClusterWide)
}

// Leftovers sorts what a prune found on a cluster under owner's label against what the owner
// wants there now (wanted, applied before any prune): stale are the objects it would delete
// (Owned, InScope, not wanted, not Kept), and owned is the denominator of the prune budget
// (OverBudget). Marks can be forged by anyone who may write an object on the cluster, so the
// denominator counts only what the owner is known to have there: the objects it wants, and
// those its earlier deliveries confirmed (known; nil knows nothing more). Protected objects
// count nowhere. An object found that is neither wanted nor known counts as a deletion, never
// as one kept: forged objects can only make a prune wait, never let a larger one through.
func Leftovers(found, wanted []*unstructured.Unstructured, owner render.Owner, s Strategy, known func(key string) bool) (stale []*unstructured.Unstructured, owned int) {
	want := make(map[string]bool, len(wanted))
	for _, obj := range wanted {
		want[render.Key(obj)] = true
		if !protected(obj) {
			owned++
		}
	}
	for _, obj := range found {
		key := render.Key(obj)
		if want[key] || !Owned(obj, owner) || !InScope(obj, owner, s) || protected(obj) {
			continue
		}
		if known != nil && known(key) {
			owned++
		}
		if Kept(obj, s) == "" {
			stale = append(stale, obj)
		}
	}
	return stale, owned
}

// Released are the adopted objects (flotillav1.AnnotationAdopted) of owner's, in its scope,
// that it no longer wants (wanted): a prune or the owner's removal never deletes them (Kept);
// it takes Flotilla's marks off them instead, leaving them to whoever made them.
func Released(found, wanted []*unstructured.Unstructured, owner render.Owner, s Strategy) []*unstructured.Unstructured {
	want := make(map[string]bool, len(wanted))
	for _, obj := range wanted {
		want[render.Key(obj)] = true
	}
	var out []*unstructured.Unstructured
	for _, obj := range found {
		if !want[render.Key(obj)] && Owned(obj, owner) && InScope(obj, owner, s) && obj.GetAnnotations()[flotillav1.AnnotationAdopted] != "" {
			out = append(out, obj)
		}
	}
	return out
}

// ConfirmCommand is the command, ready to paste, that confirms value for owner: `kubectl
// annotate` of flotilla.dev/confirm-prune on the object s.ConfirmOn names, or on the owner
// itself (with its namespace), and for an owner on a spoke the cluster to run it against.
func ConfirmCommand(owner render.Owner, s Strategy, value string) string {
	target := strings.ToLower(owner.Kind) + " " + owner.Name
	if owner.Namespace != "" {
		target = "-n " + owner.Namespace + " " + target
	}
	if s.ConfirmOn != "" {
		target = s.ConfirmOn
	}
	cmd := fmt.Sprintf("kubectl annotate --overwrite %s %s=%s", target, flotillav1.AnnotationConfirmPrune, value)
	if owner.OnSpoke() {
		cmd += " (on cluster " + owner.Cluster + ")"
	}
	return cmd
}
