package inventory

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/intern"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func labelled(ns, name, uid, owner string, payload int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": uid,
			"labels":      map[string]any{flotillav1.LabelOwner: owner},
			"annotations": map[string]any{flotillav1.AnnotationOwner: "Propagation/team/web", "note": strings.Repeat("n", 4096)}},
		"data": map[string]any{"payload": strings.Repeat("x", payload)},
	}}
}

func TestSpokeCacheKeepsKnownOwnersWholeAndStubsTheRest(t *testing.T) {
	reg := owners.New()
	web := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	reg.Add(web, false)
	budget := newCacheBudget("eu-1", 1<<20, logr.Discard())
	s := newSpokeCache("eu-1", reg, budget, intern.NewTable(100, 1024))
	keep := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		out, err := s.transform(u)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*unstructured.Unstructured)
	}

	whole := keep(labelled("team", "web", "1", web.LabelValue(), 1000))
	if isStub(whole) || whole.Object["data"] == nil {
		t.Error("a known owner's object in its namespace is not kept whole")
	}
	for name, u := range map[string]*unstructured.Unstructured{
		"unknown owner":                  labelled("team", "a", "2", "o-00000000000000000000", 1000),
		"known owner, another namespace": labelled("playground", "b", "3", web.LabelValue(), 1000),
	} {
		stub := keep(u)
		if !isStub(stub) || stub.Object["data"] != nil || stub.GetAnnotations()["note"] != "" {
			t.Errorf("%s: not a stub: %v", name, stub.Object)
		}
		if stub.GetName() != u.GetName() || stub.GetNamespace() != u.GetNamespace() || stub.GetLabels()[flotillav1.LabelOwner] != u.GetLabels()[flotillav1.LabelOwner] ||
			stub.GetAnnotations()[flotillav1.AnnotationOwner] == "" {
			t.Errorf("%s: the stub lost what lookups need: %v", name, stub.Object)
		}
	}
	if b, o, st, _ := budget.totals(); o != 1 || st != 2 || b < 1000 || b > 8000 {
		t.Errorf("budget: %d bytes, %d objects, %d stubs; want about 1 KB of JSON+metadata, 1 object, 2 stubs", b, o, st)
	}

	// Past the bound, a known owner's objects are stubs too, and room comes back with deletions.
	big := keep(labelled("team", "big", "4", web.LabelValue(), 2<<20))
	if !isStub(big) {
		t.Error("an object past the bound is kept whole")
	}
	if _, _, _, full := budget.totals(); !full {
		t.Error("the budget does not say it is full")
	}
	budget.forget("1")
	budget.forget("4")
	if b, o, st, _ := budget.totals(); b != 0 || o != 0 || st != 2 {
		t.Errorf("after deletions: %d bytes, %d objects, %d stubs; want 0, 0, 2", b, o, st)
	}
	// A later version of an object replaces its size rather than adding to it.
	keep(labelled("team", "web", "1", web.LabelValue(), 1000))
	first, _, _, _ := budget.totals()
	keep(labelled("team", "web", "1", web.LabelValue(), 3000))
	if second, o, _, _ := budget.totals(); o != 1 || second-first != 2000 {
		t.Errorf("an update counted %d more bytes and %d objects, want 2000 and 1", second-first, o)
	}
}

func TestStubLabelsAreBounded(t *testing.T) {
	many := map[string]string{flotillav1.LabelOwner: "o-1"}
	for i := range 100 {
		many[strings.Repeat("k", 40)+string(rune('a'+i%26))+strings.Repeat("z", i)] = strings.Repeat("v", 63)
	}
	u := &unstructured.Unstructured{}
	u.SetLabels(many)
	if l := stubOf(u).GetLabels(); len(l) != 1 || l[flotillav1.LabelOwner] != "o-1" {
		t.Errorf("a stub keeps %d labels", len(l))
	}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", UID: types.UID("u"), Labels: map[string]string{"x": "y"}}, Data: map[string]string{"k": "v"}}
	st := stubOf(typed).(*corev1.ConfigMap)
	if !isStub(st) || st.Data != nil || st.Name != "a" || st.Labels["x"] != "y" {
		t.Errorf("typed stub: %+v", st)
	}
}

// stubbingReader is a cache whose objects are stubs, as a spoke cache holds them.
type stubbingReader struct{ client.Reader }

func (r stubbingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	obj.SetAnnotations(map[string]string{annotationStub: "true"})
	return nil
}

func (r stubbingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	l := list.(*corev1.ConfigMapList)
	var kept []corev1.ConfigMap // what the cache selects: objects carrying the owner label
	for _, item := range l.Items {
		if _, ok := item.Labels[flotillav1.LabelOwner]; !ok {
			continue
		}
		if item.Name == "stubbed" {
			item.Annotations = map[string]string{annotationStub: "true"}
			item.Data = nil
		}
		kept = append(kept, item)
	}
	l.Items = kept
	return nil
}

// readerCache is a cache that reads through a reader.
type readerCache struct {
	cache.Cache
	r client.Reader
}

func (c *readerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.r.Get(ctx, key, obj, opts...)
}

func (c *readerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.r.List(ctx, list, opts...)
}

func TestStubReadingCacheReadsStubsFromTheSpoke(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	owner := map[string]string{flotillav1.LabelOwner: "o-1"}
	spoke := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "stubbed", Labels: owner}, Data: map[string]string{"k": "whole"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "kept", Labels: owner}, Data: map[string]string{"k": "whole"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "unlabelled"}, Data: map[string]string{"k": "whole"}},
	).Build()
	c := &stubReadingCache{Cache: &readerCache{r: stubbingReader{spoke}}, direct: spoke, cluster: "eu-1"}

	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "stubbed"}, cm); err != nil || isStub(cm) || cm.Data["k"] != "whole" {
		t.Errorf("Get of a stub: %v, %+v", err, cm)
	}
	var list corev1.ConfigMapList
	if err := c.List(context.Background(), &list, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, item := range list.Items {
		names[item.Name] = item.Data["k"]
	}
	if len(names) != 2 || names["stubbed"] != "whole" || names["kept"] != "whole" {
		t.Errorf("List with a stub read %v, want stubbed and kept whole, and no object the cache does not select", names)
	}
}
