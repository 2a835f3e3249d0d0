package revisions

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/work"
)

// TestWork: a record's work gives back what the cluster runs from a stored revision, and a
// record whose digest the revision and changes do not make is refused.
func TestWork(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	store := &Store{Hub: c, Metadata: c, Reader: c}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	objs := []*unstructured.Unstructured{
		rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "team"}, "data": map[string]any{"k": "v"}}),
		rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b", "namespace": "team"}, "data": map[string]any{"k": "v"}}),
	}
	name, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision(objs), objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cluster := []*unstructured.Unstructured{objs[0].DeepCopy()}
	cluster[0].SetLabels(map[string]string{"region": "us"})
	changes, err := work.Changes(objs, cluster)
	if err != nil {
		t.Fatal(err)
	}
	w := flotillav1.DeliveryWork{Revision: name, Digest: render.Revision(cluster), Changes: changes}
	got, err := store.Work(ctx, owner, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GetLabels()["region"] != "us" || got[0].GetName() != "a" {
		t.Fatalf("work gives %v", got)
	}
	w.Digest = render.Revision(objs)
	if _, err := store.Work(ctx, owner, w); err == nil {
		t.Error("a record whose digest the changes do not make was believed")
	}
}

// TestPinnedRevisionsAreTheOwnersOwn: a pin (spec.revisionPins, flotilla.dev/revision-pins)
// loads a revision of its own owner only: a tenant who can edit one owner cannot pin its
// clusters to another owner's revision, of the same namespace included, even one this store
// read before for its owner.
func TestPinnedRevisionsAreTheOwnersOwn(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	store := &Store{Hub: c, Metadata: c, Reader: c}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	other := render.Owner{Kind: "ConfigMap", Namespace: "team", Name: "settings"}
	objs := []*unstructured.Unstructured{
		rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "team"}, "data": map[string]any{"k": "v"}}),
	}
	name, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision(objs), objs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pins := []flotillav1.RevisionPin{{Cluster: "a", Revision: name}}
	if p := store.Pinned(ctx, owner, pins, "latest"); p[name].Err != nil || len(p[name].Objects) != 1 {
		t.Fatalf("the owner's own pinned revision: %+v", p[name])
	}
	if p := store.Pinned(ctx, other, pins, "latest"); p[name].Err == nil || len(p[name].Objects) != 0 {
		t.Errorf("another owner's revision was loaded for %s: %+v", other, p[name])
	}
}

// TestContentBackToAnOlderRevisionIsTheNewest: an owner whose content comes back to a kept
// revision's makes that revision the newest again (numbered after the others), as a rollback
// does to a Deployment's ReplicaSet: history, undo and a rollout's watch take the newest kept
// revision for the latest.
func TestContentBackToAnOlderRevisionIsTheNewest(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	save := func(store *Store, value string) string {
		objs := []*unstructured.Unstructured{rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "namespace": "team"}, "data": map[string]any{"k": value}})}
		name, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision(objs), objs, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	store := &Store{Hub: c, Metadata: c, Reader: c}
	v1 := save(store, "v1")
	v2 := save(store, "v2")
	if back := save(store, "v1"); back != v1 {
		t.Fatalf("content back to v1 saved as %s, want %s", back, v1)
	}
	// A store that remembers nothing (a restarted hub controller) sees the same.
	kept, err := (&Store{Hub: c, Metadata: c, Reader: c}).List(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || kept[0].Name != v2 || kept[1].Name != v1 || kept[1].Number != 3 {
		t.Fatalf("kept %+v, want %s then %s numbered 3", kept, v2, v1)
	}
	cr := &appsv1.ControllerRevision{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: v1}, cr); err != nil || cr.Revision != 3 {
		t.Fatalf("revision %s: %v, .revision %d", v1, err, cr.Revision)
	}
}
