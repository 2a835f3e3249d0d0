package decide

import (
	"errors"
	"strings"
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
		l := map[string]string{flotillav1.LabelManagedBy: flotillav1.ManagedByValue}
		if ownerLabel {
			l[flotillav1.LabelOwner] = owner.LabelValue()
		}
		u.SetLabels(l)
		if ownerAnnotation {
			u.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: owner.String()})
		}
		return u
	}
	marked := func(value string) *unstructured.Unstructured {
		u := live(nil)
		u.SetLabels(map[string]string{"tool/part-of": value})
		return u
	}
	tests := []struct {
		name     string
		live     *unstructured.Unstructured
		owner    render.Owner
		conflict flotillav1.ConflictPolicy
		want     error // nil, ErrConflict, or ErrHeld
	}{
		{"ours", live(&a), a, "", nil},
		{"unmanaged, rejected by default", live(nil), a, "", ErrConflict},
		{"unmanaged, rejected when asked", live(nil), a, flotillav1.ConflictReject, ErrConflict},
		{"unmanaged, adopted on request", live(nil), a, flotillav1.ConflictAdopt, nil},
		// First owner wins, whatever the names: an incumbent keeps its object.
		{"an incumbent whose name sorts later keeps it", live(&b), a, "", ErrHeld},
		{"an incumbent whose name sorts first keeps it", live(&a), b, "", ErrHeld},
		{"an incumbent keeps it even when we adopt", live(&a), b, flotillav1.ConflictAdopt, ErrHeld},
		{"ours as an earlier release marked it", legacy(a, true, true), a, "", nil},
		{"ours, its owner label removed on the cluster", legacy(a, false, true), a, "", nil},
		{"our annotation under another owner's label is not ours", func() *unstructured.Unstructured {
			u := live(&a)
			u.SetLabels(map[string]string{flotillav1.LabelOwner: b.LabelValue()})
			return u
		}(), a, flotillav1.ConflictAdopt, ErrHeld},
		{"our label under another owner's annotation is no one's", func() *unstructured.Unstructured {
			u := live(&a)
			u.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: b.String()})
			return u
		}(), a, flotillav1.ConflictAdopt, ErrMarksDisagree},
		{"ours with only our label left", func() *unstructured.Unstructured {
			u := live(&a)
			u.SetAnnotations(nil)
			return u
		}(), a, "", nil},
		{"another's as an earlier release marked it", legacy(a, true, true), b, flotillav1.ConflictAdopt, ErrHeld},
		{"another's, with only the managed-by label left", legacy(a, false, false), b, flotillav1.ConflictAdopt, ErrHeld},
		{"another's, with only the owner label", func() *unstructured.Unstructured {
			u := live(&a)
			u.SetAnnotations(nil)
			return u
		}(), b, flotillav1.ConflictAdopt, ErrHeld},
		{"another's annotation without any Flotilla label is not a marker", func() *unstructured.Unstructured {
			u := live(nil)
			u.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: a.String()})
			return u
		}(), b, flotillav1.ConflictAdopt, nil},
		// Adopted by its mark: what another tool made for the same thing.
		{"unmanaged with the mark, adopted", marked("set-1"), a, "", nil},
		{"unmanaged with another value of the mark, rejected", marked("set-2"), a, "", ErrConflict},
		{"an incumbent keeps it even with the mark", func() *unstructured.Unstructured {
			u := live(&b)
			u.SetLabels(map[string]string{flotillav1.LabelOwner: b.LabelValue(), "tool/part-of": "set-1"})
			return u
		}(), a, "", ErrHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOwner(tt.live, tt.owner, Strategy{Conflict: tt.conflict, AdoptMarked: Mark{Key: "tool/part-of", Value: "set-1"}})
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("checkOwner = %v, want nil", err)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("checkOwner = %v, want %v", err, tt.want)
			case tt.want == ErrConflict && errors.Is(err, ErrHeld):
				t.Fatalf("checkOwner = %v: nobody holds an unmanaged object", err)
			}
		})
	}
}

// A refusal names the holder, so the user knows which owner to change.
func TestHeldNamesTheHolder(t *testing.T) {
	err := checkOwner(delivered(rival, "h1"), tenant, Strategy{})
	if want := rival.String(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("checkOwner = %v, want it to name %s", err, want)
	}
	nameless := object(map[string]string{flotillav1.LabelManagedBy: flotillav1.ManagedByValue}, nil)
	if err := checkOwner(nameless, tenant, Strategy{}); err == nil || !strings.Contains(err.Error(), "another owner") {
		t.Fatalf("checkOwner = %v, want it to say another owner when none is named", err)
	}
}

func TestHoldsAndOwned(t *testing.T) {
	forged := delivered(tenant, "h1")
	forged.SetAnnotations(map[string]string{flotillav1.AnnotationOwner: rival.String()})
	cases := []struct {
		name        string
		obj         *unstructured.Unstructured
		holds, owns bool
	}{
		{"the owner's", delivered(tenant, "h1"), true, true},
		{"another owner's", delivered(rival, "h1"), false, false},
		{"the owner's, unlabelled", unlabelled(), false, false},
		{"its label, another's name", forged, true, false},
		{"unmanaged", unmanaged(), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Holds(c.obj, tenant); got != c.holds {
				t.Errorf("Holds = %v, want %v", got, c.holds)
			}
			if got := Owned(c.obj, tenant); got != c.owns {
				t.Errorf("Owned = %v, want %v", got, c.owns)
			}
		})
	}
}
