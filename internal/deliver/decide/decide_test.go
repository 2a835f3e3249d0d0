package decide

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

var (
	tenant = render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	rival  = render.Owner{Kind: "Propagation", Namespace: "team", Name: "api"}
	admin  = render.Owner{Kind: "ClusterPropagation", Name: "platform"}
)

// object is a ConfigMap team/x with the given labels and annotations.
func object(labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("team")
	u.SetName("x")
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

// desired is tenant's rendered object at hash h2, with extra annotations (mode, drift).
func desired(extra ...string) *unstructured.Unstructured {
	a := map[string]string{flotillav1.AnnotationOwner: tenant.String(), flotillav1.AnnotationHash: "h2"}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = extra[i+1]
	}
	return object(map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, a)
}

// delivered is an object as owner applied it at hash.
func delivered(owner render.Owner, hash string) *unstructured.Unstructured {
	return object(map[string]string{flotillav1.LabelOwner: owner.LabelValue()},
		map[string]string{flotillav1.AnnotationOwner: owner.String(), flotillav1.AnnotationHash: hash})
}

// unlabelled is tenant's object whose owner label was removed on the cluster.
func unlabelled() *unstructured.Unstructured {
	return object(nil, map[string]string{flotillav1.AnnotationOwner: tenant.String(), flotillav1.AnnotationHash: "h2"})
}

// unmanaged is an object Flotilla did not create.
func unmanaged() *unstructured.Unstructured { return object(map[string]string{"app": "x"}, nil) }

// legacy is rival's object as earlier releases marked it, with only the managed-by label left.
func legacy() *unstructured.Unstructured {
	return object(map[string]string{flotillav1.LabelManagedBy: flotillav1.ManagedByValue},
		map[string]string{flotillav1.AnnotationOwner: rival.String()})
}

// metadataOf is the metadata alone of an object, as a metadata list returns it.
func metadataOf(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations()}}
}

func TestDecide(t *testing.T) {
	const ns = meta.RESTScopeNameNamespace
	edited := []string{"/data/v"}
	labels := []string{"/metadata/labels"}
	correct := Strategy{Drift: flotillav1.DriftCorrect}
	report := Strategy{Drift: flotillav1.DriftReport}
	ignore := Strategy{Drift: flotillav1.DriftIgnore}
	once := Strategy{Mode: flotillav1.ModeApplyOnce}
	adopt := Strategy{Conflict: flotillav1.ConflictAdopt}
	cases := []struct {
		name    string
		owner   render.Owner
		s       Strategy
		desired *unstructured.Unstructured
		live    Live
		want    Decision
		err     error // the sentinel Err wraps
	}{
		// Tenancy, first of all.
		{"absent, in the owner's namespace", tenant, Strategy{}, desired(), Live{Scope: ns}, Decision{Action: Create}, nil},
		{"a kind cluster-scoped on this cluster", tenant, Strategy{}, desired(), Live{Scope: meta.RESTScopeNameRoot},
			Decision{Action: Refused}, ErrOutOfScope},
		{"another namespace", tenant, Strategy{}, func() *unstructured.Unstructured {
			d := desired()
			d.SetNamespace("kube-system")
			return d
		}(), Live{Scope: ns}, Decision{Action: Refused}, ErrOutOfScope},
		{"a namespaced owner whose caller did not look the scope up", tenant, Strategy{}, desired(), Live{},
			Decision{Action: Refused}, ErrOutOfScope},
		{"refused even when the object is already the owner's", tenant, Strategy{}, desired(), Live{Scope: meta.RESTScopeNameRoot, Object: delivered(tenant, "h2")},
			Decision{Action: Refused}, ErrOutOfScope},
		{"a cluster-scoped owner: scope not read", admin, Strategy{}, desired(), Live{}, Decision{Action: Create}, nil},

		// Absent on the cluster.
		{"absent, never confirmed here: a first delivery", tenant, correct, desired(), Live{Scope: ns}, Decision{Action: Create}, nil},
		{"deleted on the cluster, Correct", tenant, correct, desired(), Live{Scope: ns, Known: true},
			Decision{Action: Correct, Deleted: true}, nil},
		{"deleted on the cluster, default policy", tenant, Strategy{}, desired(), Live{Scope: ns, Known: true},
			Decision{Action: Correct, Deleted: true}, nil},
		{"deleted on the cluster, Report", tenant, report, desired(), Live{Scope: ns, Known: true},
			Decision{Action: Left, Deleted: true}, nil},
		{"deleted on the cluster, Ignore", tenant, ignore, desired(), Live{Scope: ns, Known: true},
			Decision{Action: Ignored, Deleted: true}, nil},
		{"deleted on the cluster, ApplyOnce recreates whatever the policy", tenant, Strategy{Mode: flotillav1.ModeApplyOnce, Drift: flotillav1.DriftReport},
			desired(), Live{Scope: ns, Known: true}, Decision{Action: Correct, Deleted: true}, nil},

		// Ownership.
		{"unmanaged, refused by default", tenant, Strategy{}, desired(), Live{Scope: ns, Object: unmanaged()},
			Decision{Action: Conflict}, ErrConflict},
		{"unmanaged, adopted on request", tenant, adopt, desired(), Live{Scope: ns, Object: unmanaged()}, Decision{Action: Update}, nil},
		{"unmanaged, adopted once under ApplyOnce", tenant, Strategy{Conflict: flotillav1.ConflictAdopt, Mode: flotillav1.ModeApplyOnce},
			desired(), Live{Scope: ns, Object: unmanaged()}, Decision{Action: Update}, nil},
		{"unmanaged, its differences are not drift", tenant, adopt, desired(), Live{Scope: ns, Object: unmanaged(), Drift: edited},
			Decision{Action: Update}, nil},
		{"another owner's, even when adopting", tenant, adopt, desired(), Live{Scope: ns, Object: delivered(rival, "h2")},
			Decision{Action: Conflict}, ErrHeld},
		{"another owner's, whatever the mode", tenant, once, desired(), Live{Scope: ns, Object: delivered(rival, "h1")},
			Decision{Action: Conflict}, ErrHeld},
		{"another owner's as an earlier release marked it", tenant, adopt, desired(), Live{Scope: ns, Object: legacy()},
			Decision{Action: Conflict}, ErrHeld},
		{"the owner's, unlabelled before this worker confirmed it", tenant, Strategy{}, desired(), Live{Scope: ns, Object: unlabelled()},
			Decision{Action: Update}, nil},
		{"the owner's, unlabelled after a delivery, Correct", tenant, correct, desired(), Live{Scope: ns, Object: unlabelled(), Known: true},
			Decision{Action: Correct, Fields: labels}, nil},
		{"the owner's, unlabelled after a delivery, Report", tenant, report, desired(), Live{Scope: ns, Object: unlabelled(), Known: true},
			Decision{Action: Left, Fields: labels}, nil},
		{"the owner's, unlabelled after a delivery, Ignore", tenant, ignore, desired(), Live{Scope: ns, Object: unlabelled(), Known: true},
			Decision{Action: Ignored, Fields: labels}, nil},
		{"the owner's, unlabelled after a delivery, ApplyOnce leaves it", tenant, once, desired(), Live{Scope: ns, Object: unlabelled(), Known: true},
			Decision{Action: Left, Fields: labels}, nil},
		{"the owner's, unlabelled, read as metadata alone", tenant, correct, desired(), Live{Scope: ns, Object: metadataOf(unlabelled()), Known: true},
			Decision{Action: Correct, Fields: labels}, nil},

		// Mode.
		{"ApplyOnce never updates, even a hub change", tenant, once, desired(), Live{Scope: ns, Object: delivered(tenant, "h1")},
			Decision{Action: Skip}, nil},
		{"ApplyOnce reports differences, even under Ignore", tenant, Strategy{Mode: flotillav1.ModeApplyOnce, Drift: flotillav1.DriftIgnore},
			desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited}, Decision{Action: Skip, Fields: edited}, nil},
		{"ApplyOnce by annotation, among reconciled objects", tenant, Strategy{},
			desired(flotillav1.AnnotationMode, string(flotillav1.ModeApplyOnce)), Live{Scope: ns, Object: delivered(tenant, "h1")}, Decision{Action: Skip}, nil},
		{"Reconcile by annotation, under ApplyOnce", tenant, once,
			desired(flotillav1.AnnotationMode, string(flotillav1.ModeReconcile)), Live{Scope: ns, Object: delivered(tenant, "h1")}, Decision{Action: Update}, nil},

		// Desired hash and drift.
		{"as desired", tenant, Strategy{}, desired(), Live{Scope: ns, Object: delivered(tenant, "h2")}, Decision{Action: Unchanged}, nil},
		{"as desired, and confirmed before", tenant, Strategy{}, desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Known: true},
			Decision{Action: Unchanged}, nil},
		{"a hub change", tenant, Strategy{}, desired(), Live{Scope: ns, Object: delivered(tenant, "h1")}, Decision{Action: Update}, nil},
		{"a hub change wins over ignored drift", tenant, ignore, desired(), Live{Scope: ns, Object: delivered(tenant, "h1"), Drift: edited},
			Decision{Action: Update}, nil},
		{"drift, Correct", tenant, correct, desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Correct, Fields: edited}, nil},
		{"drift, default policy", tenant, Strategy{}, desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Correct, Fields: edited}, nil},
		{"drift, Report", tenant, report, desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Left, Fields: edited}, nil},
		{"drift, Ignore", tenant, ignore, desired(), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Ignored, Fields: edited}, nil},
		{"drift, Ignore by annotation under Correct", tenant, correct,
			desired(flotillav1.AnnotationDrift, string(flotillav1.DriftIgnore)), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Ignored, Fields: edited}, nil},
		{"drift, Report by annotation under Ignore", tenant, ignore,
			desired(flotillav1.AnnotationDrift, string(flotillav1.DriftReport)), Live{Scope: ns, Object: delivered(tenant, "h2"), Drift: edited},
			Decision{Action: Left, Fields: edited}, nil},
		{"an administrator's object, as desired", admin, Strategy{}, func() *unstructured.Unstructured {
			d := desired()
			d.SetLabels(map[string]string{flotillav1.LabelOwner: admin.LabelValue()})
			return d
		}(), Live{Object: delivered(admin, "h2")}, Decision{Action: Unchanged}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.owner, c.s, c.desired, c.live)
			if got.Action != c.want.Action || !slices.Equal(got.Fields, c.want.Fields) || got.Deleted != c.want.Deleted {
				t.Fatalf("Decide = %+v, want %+v", got, c.want)
			}
			switch {
			case c.err == nil && got.Err != nil:
				t.Fatalf("Err = %v, want none", got.Err)
			case c.err != nil && !errors.Is(got.Err, c.err):
				t.Fatalf("Err = %v, want %v", got.Err, c.err)
			}
			if c.err == ErrConflict && errors.Is(got.Err, ErrHeld) {
				t.Fatalf("Err = %v: an object Flotilla did not create is not held by an owner to wait for", got.Err)
			}
		})
	}
}

func TestWrites(t *testing.T) {
	writes := map[Action]bool{Create: true, Update: true, Correct: true}
	for _, a := range []Action{Create, Update, Correct, Unchanged, Skip, Left, Ignored, Conflict, Refused} {
		if a.Writes() != writes[a] {
			t.Errorf("%s.Writes() = %v", a, a.Writes())
		}
	}
}

// An object taken over by conflict: Adopt is marked adopted; one of Flotilla's, one adopted
// by its mark, or one created, is not. A desired object may not carry the mark.
func TestAdoptMarks(t *testing.T) {
	adopt := Strategy{Conflict: flotillav1.ConflictAdopt, AdoptMarked: Mark{Key: "tool/part-of", Value: "set-1"}}
	cases := []struct {
		name  string
		live  metav1.Object
		s     Strategy
		adopt bool
	}{
		{"an object someone made on the cluster", object(map[string]string{"app": "x"}, nil), adopt, true},
		{"one adopted before, its owner label removed there", object(nil, map[string]string{flotillav1.AnnotationAdopted: tenant.String(), flotillav1.AnnotationOwner: tenant.String()}), adopt, true},
		{"Flotilla's own, its owner label removed there", object(nil, map[string]string{flotillav1.AnnotationOwner: tenant.String()}), adopt, false},
		{"what another tool made for the owner, adopted by its mark", object(map[string]string{"tool/part-of": "set-1"}, nil), adopt, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(tenant, c.s, desired(), Live{Scope: meta.RESTScopeNameNamespace, Object: c.live})
			if d.Action != Update || d.Adopt != c.adopt {
				t.Errorf("Decide = %s adopt=%v, want update adopt=%v", d.Action, d.Adopt, c.adopt)
			}
		})
	}
	if d := Decide(tenant, adopt, desired(), Live{Scope: meta.RESTScopeNameNamespace}); d.Adopt {
		t.Error("a created object is marked adopted")
	}
	if d := Decide(tenant, adopt, desired(flotillav1.AnnotationAdopted, ""), Live{Scope: meta.RESTScopeNameNamespace}); d.Action != Refused || !errors.Is(d.Err, ErrAdoptedMark) {
		t.Errorf("a desired object carrying the adopted mark: %s (%v), want refused", d.Action, d.Err)
	}
	adopted := object(map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, map[string]string{flotillav1.AnnotationOwner: tenant.String(), flotillav1.AnnotationAdopted: tenant.String()})
	if why := Kept(adopted, Strategy{}); why == "" {
		t.Error("an adopted object would be pruned")
	}
	created := object(map[string]string{flotillav1.LabelOwner: tenant.LabelValue()}, map[string]string{flotillav1.AnnotationOwner: tenant.String()})
	created.SetName("created")
	if got := Released([]*unstructured.Unstructured{adopted, created}, nil, tenant, Strategy{}); len(got) != 1 || got[0] != adopted {
		t.Errorf("Released = %v, want the adopted object only", got)
	}
	if got := Released([]*unstructured.Unstructured{adopted}, []*unstructured.Unstructured{adopted}, tenant, Strategy{}); len(got) != 0 {
		t.Errorf("Released = %v while the owner still wants it", got)
	}
}
