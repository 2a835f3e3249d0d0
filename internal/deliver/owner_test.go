package deliver

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestCheckOwner(t *testing.T) {
	a := render.Owner{Kind: "Propagation", Namespace: "ns", Name: "a"}
	b := render.Owner{Kind: "Propagation", Namespace: "ns", Name: "b"}
	live := func(owner *render.Owner) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if owner != nil {
			u.SetLabels(map[string]string{flotillav1.LabelOwner: owner.LabelValue()})
			u.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: owner.String()})
		}
		return u
	}
	// As earlier releases wrote them: the managed-by label as well, which may be all that is
	// left when the owner label was removed on the cluster.
	legacy := func(owner render.Owner, ownerLabel, ownerAnnotation bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		l := map[string]string{flotillav1.LabelManagedBy: "flotilla"}
		if ownerLabel {
			l[flotillav1.LabelOwner] = owner.LabelValue()
		}
		u.SetLabels(l)
		if ownerAnnotation {
			u.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: owner.String()})
		}
		return u
	}
	tests := []struct {
		name     string
		live     *unstructured.Unstructured
		job      Job
		conflict bool
	}{
		{"ours", live(&a), Job{Owner: a}, false},
		{"unmanaged, rejected by default", live(nil), Job{Owner: a}, true},
		{"unmanaged, adopted on request", live(nil), Job{Owner: a, Conflict: flotillav1.ConflictAdopt}, false},
		// First owner wins, whatever the names: an incumbent keeps its object.
		{"an incumbent whose name sorts later keeps it", live(&b), Job{Owner: a}, true},
		{"an incumbent whose name sorts first keeps it", live(&a), Job{Owner: b}, true},
		{"an incumbent keeps it even when we adopt", live(&a), Job{Owner: b, Conflict: flotillav1.ConflictAdopt}, true},
		{"ours as an earlier release marked it", legacy(a, true, true), Job{Owner: a}, false},
		{"ours, its owner label removed on the cluster", legacy(a, false, true), Job{Owner: a}, false},
		{"another's as an earlier release marked it", legacy(a, true, true), Job{Owner: b, Conflict: flotillav1.ConflictAdopt}, true},
		{"another's, with only the managed-by label left", legacy(a, false, false), Job{Owner: b, Conflict: flotillav1.ConflictAdopt}, true},
		{"another's, with only the owner label", func() *unstructured.Unstructured {
			u := live(&a)
			u.SetAnnotations(nil)
			return u
		}(), Job{Owner: b, Conflict: flotillav1.ConflictAdopt}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOwner(tt.live, tt.job)
			if got := errors.Is(err, errConflict); got != tt.conflict {
				t.Fatalf("conflict = %v (%v), want %v", got, err, tt.conflict)
			}
		})
	}
}

func TestJoinBounded(t *testing.T) {
	long := make([]string, 100)
	for i := range long {
		long[i] = "configmap ns/some-object-name: the server rejected it"
	}
	if got := joinBounded(long); len(got) > maxMessage+3 {
		t.Fatalf("message of %d bytes", len(got))
	}
}
