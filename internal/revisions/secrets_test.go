package revisions

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
)

const canary = "canary-3b8e1f"

// rendered renders a hub object for owner, as a propagator does.
func rendered(t *testing.T, owner render.Owner, o map[string]any) *unstructured.Unstructured {
	t.Helper()
	r, err := render.Render(&unstructured.Unstructured{Object: o}, owner)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A revision keeps no Secret value; Load reads it again from its source, and refuses a source
// that is gone or now holds something else, without quoting either.
func TestRevisionsKeepNoSecretData(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	hubSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "db"}, Data: map[string][]byte{"password": []byte(canary)}}
	manifest := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "bundle"},
		Data: map[string]string{"a.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  token: " + canary + "-manifest\n"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hubSecret, manifest).Build()
	store := &Store{Hub: c, Metadata: c, Reader: c}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}

	hub := &unstructured.Unstructured{}
	hub.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(hubSecret), hub); err != nil {
		t.Fatal(err)
	}
	objs := []*unstructured.Unstructured{
		rendered(t, owner, hub.Object),
		rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "api", "namespace": "team"},
			"stringData": map[string]any{"token": canary + "-manifest"}}),
		rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "plain", "namespace": "team"},
			"data": map[string]any{"k": "v"}}),
	}
	sources := map[string]Source{
		render.Key(objs[0]): {Kind: "Secret", Namespace: "team", Name: "db"},
		render.Key(objs[1]): {Kind: "ConfigMap", Namespace: "team", Name: "bundle", Manifest: true},
	}
	name, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision(objs), objs, sources, nil)
	if err != nil {
		t.Fatal(err)
	}
	cr := &appsv1.ControllerRevision{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, cr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cr.Data.Raw), canary) || !strings.Contains(string(cr.Data.Raw), `"plain"`) {
		t.Fatalf("the stored revision holds Secret data, or not the other objects: %s", cr.Data.Raw)
	}

	back, _, err := store.Load(ctx, owner, name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		if render.HashOf(back[i]) != render.HashOf(objs[i]) {
			t.Fatalf("object %d read back differs from the one saved", i)
		}
		if h, _ := render.Hash(back[i]); h != render.HashOf(objs[i]) {
			t.Fatalf("object %d read back without its values: %v", i, back[i].Object)
		}
	}

	load := func() error {
		_, _, err := store.Load(ctx, owner, name)
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Fatalf("the error quotes a Secret: %v", err)
		}
		return err
	}
	hubSecret.Data["password"] = []byte(canary + "-changed")
	if err := c.Update(ctx, hubSecret); err != nil {
		t.Fatal(err)
	}
	if err := load(); !errors.Is(err, ErrSecretNotAsKept) || !strings.Contains(err.Error(), "now holds other data") {
		t.Fatalf("a changed source: %v, want it refused", err)
	}
	if err := c.Delete(ctx, hubSecret); err != nil {
		t.Fatal(err)
	}
	if err := load(); !errors.Is(err, ErrSecretNotAsKept) || !strings.Contains(err.Error(), "Secret team/db on the hub, which is gone") {
		t.Fatalf("a deleted source: %v, want it refused", err)
	}
	// A Secret saved without a source cannot come back.
	unknown, err := store.Save(ctx, ledger.Owner{Owner: owner}, "other", objs[1:2], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Load(ctx, owner, unknown); !errors.Is(err, ErrSecretNotAsKept) {
		t.Fatalf("a Secret of unknown source: %v, want it refused", err)
	}
}

// Every document of a manifest Secret is secret as a whole: a revision holding one is not
// stored (ErrSealed, NotKept), and the refusal is remembered without storing anything.
func TestRevisionsKeepNoDocumentOfAManifestSecret(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	store := &Store{Hub: c, Metadata: c, Reader: c}
	owner := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	objs := []*unstructured.Unstructured{rendered(t, owner, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "team"}, "data": map[string]any{"dsn": canary}})}
	sources := map[string]Source{render.Key(objs[0]): {Kind: "Secret", Namespace: "team", Name: "bundle", Manifest: true}}
	for range 2 { // the second time, from what the store remembers
		_, err := store.Save(ctx, ledger.Owner{Owner: owner}, render.Revision(objs), objs, sources, nil)
		if !errors.Is(err, ErrSealed) || !NotKept(err) {
			t.Fatalf("a revision with a document of a manifest Secret: %v, want ErrSealed", err)
		}
	}
	var list appsv1.ControllerRevisionList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d revisions stored", len(list.Items))
	}
	// The same document from a manifest ConfigMap is kept.
	sources[render.Key(objs[0])] = Source{Kind: "ConfigMap", Namespace: "team", Name: "bundle", Manifest: true}
	other := render.Owner{Kind: "Propagation", Namespace: "team", Name: "api"}
	if _, err := store.Save(ctx, ledger.Owner{Owner: other}, render.Revision(objs), objs, sources, nil); err != nil {
		t.Fatalf("a document of a manifest ConfigMap: %v", err)
	}
}
