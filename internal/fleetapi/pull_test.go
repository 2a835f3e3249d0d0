package fleetapi

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/work"
)

func keptRGD(t *testing.T, name, kind string) (*unstructured.Unstructured, string) {
	t.Helper()
	rgd := &kro.ResourceGraphDefinition{}
	rgd.Name = name
	rgd.Spec.Schema = &kro.Schema{Kind: kind, APIVersion: "v1alpha1"}
	obj, hash, err := revisionObject(rgd)
	if err != nil {
		t.Fatal(err)
	}
	return obj, hash
}

// TestPullWorkNamesItsRevision: the work of a pull cluster resolves, on the work endpoint, to the
// digest the record says (revisions.Resolve), that digest differs with the revision and the
// tenancy, and the hub reads back from it which revision the agent serves.
func TestPullWorkNamesItsRevision(t *testing.T) {
	owner := ownerOf("notes")
	v1, h1 := keptRGD(t, "notes", "Note")
	_, h2 := keptRGD(t, "notes", "NoteV2")
	base := []*unstructured.Unstructured{v1}

	objs := pullObjects(base, h1, "")
	if got := objs[0].GetAnnotations()[AnnotationTenancy]; got != string(flotillav1.TenancyNamespace) {
		t.Errorf("tenancy %q, want Namespace by default", got)
	}
	if _, marked := v1.GetAnnotations()[AnnotationTenancy]; marked {
		t.Error("the kept revision was changed")
	}
	changes, err := work.Changes(base, objs)
	if err != nil {
		t.Fatal(err)
	}
	w := flotillav1.DeliveryWork{Revision: revisions.Name(owner, h1), Digest: render.Revision(objs), Changes: changes}
	resolved, err := revisions.Resolve(base, w)
	if err != nil {
		t.Fatalf("the work endpoint cannot resolve the work: %v", err)
	}
	if err := work.Confined(base, changes); err != nil {
		t.Errorf("the hub's change is not confined to the revision's objects: %v", err)
	}
	if resolved[0].GetAnnotations()[AnnotationTenancy] != "Namespace" {
		t.Errorf("resolved %v", resolved[0].GetAnnotations())
	}

	digests := map[string]bool{}
	for _, h := range []string{h1, h2} {
		for _, tn := range []flotillav1.Tenancy{flotillav1.TenancyNamespace, flotillav1.TenancyCluster} {
			d := pullDigest("notes", h, tn)
			if d != render.Revision(pullObjects(base, h, tn)) {
				t.Errorf("pullDigest(%s, %s) is not the work's digest", h, tn)
			}
			digests[d] = true
		}
	}
	if len(digests) != 4 {
		t.Errorf("digests collide: %v", digests)
	}

	// What the agent serves is read back from the record's status.revision.
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{
		Name: revisions.Name(owner, h2), Namespace: ledger.NamespaceOf(owner), Labels: map[string]string{flotillav1.LabelOwner: owner.LabelValue()}}}).Build()
	r := &Reconciler{Revisions: &revisions.Store{Metadata: hub, Reader: hub}}
	newest := rgdRevision{name: revisions.Name(owner, h1)}
	rec := func(status, workDigest string) *flotillav1.Delivery {
		d := &flotillav1.Delivery{Status: flotillav1.DeliveryStatus{Revision: status}}
		if workDigest != "" {
			d.Spec.Work = &flotillav1.DeliveryWork{Revision: "the-works-revision", Digest: workDigest}
		}
		return d
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		rec    *flotillav1.Delivery
		served string
		unread bool
	}{
		{"no record", nil, "", false},
		{"nothing served yet", rec("", "d"), "", false},
		{"the work's digest", rec("d", "d"), "the-works-revision", false},
		{"the newest", rec(pullDigest("notes", h1, flotillav1.TenancyCluster), "d"), revisions.Name(owner, h1), false},
		{"an older kept one", rec(pullDigest("notes", h2, flotillav1.TenancyNamespace), "d"), revisions.Name(owner, h2), false},
		{"a push cluster's digest", rec("0123456789abcdef", "d"), "", true},
	} {
		served, unread := r.servedByAgent(ctx, tc.rec, owner, newest)
		if served != tc.served || unread != tc.unread {
			t.Errorf("%s: served %q unread %v, want %q %v", tc.name, served, unread, tc.served, tc.unread)
		}
	}
}

// TestPullRowShowsTheAgentsReason: a result the agent reported with a reason shows on the row as
// a push cluster's would; anything else keeps the row.
func TestPullRowShowsTheAgentsReason(t *testing.T) {
	failed := flotillav1.APIClusterResult{Phase: flotillav1.APIFailed, Reason: flotillav1.ReasonApplyFailed, Message: "m"}
	withReason := func(reason string) *flotillav1.Delivery {
		return &flotillav1.Delivery{Status: flotillav1.DeliveryStatus{Reason: reason, Message: "m"}}
	}
	for _, tc := range []struct {
		reason string
		row    flotillav1.APIClusterResult
		phase  flotillav1.APIPhase
		want   string
	}{
		{flotillav1.ReasonSchemaNotFound, failed, flotillav1.APICompileFailed, flotillav1.ReasonSchemaNotFound},
		{flotillav1.ReasonCompileFailed, failed, flotillav1.APICompileFailed, flotillav1.ReasonCompileFailed},
		{flotillav1.ReasonBreakingChange, failed, flotillav1.APIBlocked, flotillav1.ReasonBreakingChange},
		{flotillav1.ReasonConflict, failed, flotillav1.APIConflict, flotillav1.ReasonConflict},
		{"SomethingElse", failed, flotillav1.APIFailed, flotillav1.ReasonApplyFailed},
		{flotillav1.ReasonSchemaNotFound, flotillav1.APIClusterResult{Phase: flotillav1.APIServing}, flotillav1.APIServing, ""},
	} {
		got := pullRow(tc.row, withReason(tc.reason))
		if got.Phase != tc.phase || got.Reason != tc.want {
			t.Errorf("%s on %s: %s %s, want %s %s", tc.reason, tc.row.Phase, got.Phase, got.Reason, tc.phase, tc.want)
		}
	}
}

// TestSpokeWorkIsTheOwnersRGD: an agent compiles only the one RGD its item's owner names, with
// the tenancy the hub gave.
func TestSpokeWorkIsTheOwnersRGD(t *testing.T) {
	owner := ownerOf("notes")
	obj, hash := keptRGD(t, "notes", "Note")
	other, _ := keptRGD(t, "others", "Other")
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("notes")
	for name, objs := range map[string][]*unstructured.Unstructured{
		"none": nil, "two": {obj, obj}, "another RGD": {other}, "not an RGD": {cm},
	} {
		if _, _, err := rgdOfWork(SpokeWork{Owner: owner, Objects: objs}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for tenancy, wide := range map[flotillav1.Tenancy]bool{flotillav1.TenancyCluster: true, flotillav1.TenancyNamespace: false, "": false} {
		rgd, gotWide, err := rgdOfWork(SpokeWork{Owner: owner, Objects: pullObjects([]*unstructured.Unstructured{obj}, hash, tenancy)})
		if err != nil || rgd.Name != "notes" || gotWide != wide {
			t.Errorf("tenancy %q: %v wide %v (%v)", tenancy, rgd, gotWide, err)
		}
	}
	// The RGD's own annotation does not make its instances cluster-wide: the hub's does.
	marked := obj.DeepCopy()
	marked.SetAnnotations(map[string]string{AnnotationTenancy: "Cluster"})
	if _, wide, _ := rgdOfWork(SpokeWork{Owner: owner, Objects: pullObjects([]*unstructured.Unstructured{marked}, hash, "")}); wide {
		t.Error("an RGD annotated Cluster by its author is served cluster-wide under a Namespace APIPropagation")
	}
	if !strings.HasPrefix(revisions.Name(owner, hash), "resourcegraphdefinition.kro.run.notes.") {
		t.Errorf("revision name %s", revisions.Name(owner, hash))
	}
}

// TestPullPlansThePinnedRevision: a pull cluster's work names the revision the hub plans for it
// (a pin, as the rollout's holds are), the newest before it is saved, and nothing when the pin
// is not kept; what its agent reported serving is read back with its generation.
func TestPullPlansThePinnedRevision(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).Build()
	r := &Reconciler{Revisions: &revisions.Store{Hub: hub, Metadata: hub, Reader: hub}}
	owner := ownerOf("notes")
	lo := ledger.Owner{Owner: owner, APIVersion: kro.GroupVersion.String(), ObjectKind: rgdKind, UID: "uid"}
	v1, h1 := keptRGD(t, "notes", "Note")
	v1.SetGeneration(1)
	if _, err := r.Revisions.Save(ctx, lo, h1, []*unstructured.Unstructured{v1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	rgd2 := &kro.ResourceGraphDefinition{}
	rgd2.Name, rgd2.Generation = "notes", 2
	rgd2.Spec.Schema = &kro.Schema{Kind: "NoteV2", APIVersion: "v1alpha1"}
	_, h2, err := revisionObject(rgd2)
	if err != nil {
		t.Fatal(err)
	}
	newest := rgdRevision{name: revisions.Name(owner, h2), rgd: rgd2}
	first, second := revisions.Name(owner, h1), newest.name

	planPull := func(pin string, pass pullPass) clusterPlan {
		return r.planRead(ctx, r.readPull(ctx, newest, owner, "edge", pass), newest, owner, pin, pass)
	}
	p := planPull("", pullPass{tenancy: flotillav1.TenancyCluster})
	if p.want == nil || p.want.Base.Name != second || p.pinned != "" || p.generation != 2 {
		t.Fatalf("newest (not saved yet): %+v", p)
	}
	if kind, _, _ := unstructured.NestedString(p.want.Objects[0].Object, "spec", "schema", "kind"); kind != "NoteV2" {
		t.Errorf("newest plans kind %q", kind)
	}

	served := &flotillav1.Delivery{Status: flotillav1.DeliveryStatus{Revision: pullDigest("notes", h1, flotillav1.TenancyCluster)}}
	p = planPull(first, pullPass{records: map[string]*flotillav1.Delivery{"edge": served}, tenancy: flotillav1.TenancyCluster})
	if p.want == nil || p.want.Base.Name != first || p.pinned != first {
		t.Fatalf("pinned: %+v", p)
	}
	if kind, _, _ := unstructured.NestedString(p.want.Objects[0].Object, "spec", "schema", "kind"); kind != "Note" {
		t.Errorf("pinned plans kind %q", kind)
	}
	if p.want.Revision != served.Status.Revision || p.served != first || p.row.ServedGeneration != 1 {
		t.Errorf("pinned: digest %s (served %s), served %q at generation %d", p.want.Revision, served.Status.Revision, p.served, p.row.ServedGeneration)
	}

	p = planPull(revisions.Name(owner, "0000000000000000"), pullPass{})
	if p.want != nil || p.row.Phase != flotillav1.APIFailed || p.row.Reason != flotillav1.ReasonRevisionNotKept {
		t.Errorf("a pin not kept: %+v", p.row)
	}
}
