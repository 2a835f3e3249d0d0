package chart

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestInstallOnHub applies the chart's default render to a real hub API server as `flotilla
// install` does: a server-side dry run accepts every object and keeps none; the install then
// makes every object, with the CRDs Established; a second install changes no object (same
// resourceVersions); and kro's CRD, installed on this hub by someone else, is left alone.
func TestInstallOnHub(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub())
	ctx := context.Background()
	c, err := client.New(fleet.Hub().RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := install.KroCRD()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	r := render(t, "", nil)

	// A dry run creates nothing, the namespace included: make it, as `kubectl create namespace`
	// before `kubectl apply --dry-run=server` would.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	progress := func(l string) { lines = append(lines, l) }
	if err := install.ApplyObjects(ctx, c, r.Objects, true, progress); err != nil {
		t.Fatalf("server-side dry run of the chart: %v", err)
	}
	if len(lines) != len(r.Objects) || !slices.Contains(lines, "deployment.apps/flotilla-hub serverside-applied (server dry run)") {
		t.Errorf("dry run printed %d lines for %d objects:\n%s", len(lines), len(r.Objects), strings.Join(lines, "\n"))
	}
	for _, o := range r.Objects {
		if o.GetKind() == "Namespace" || o.GetName() == theirs.Name {
			continue
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s after the dry run: %v; want not found", o.GetKind(), o.GetName(), err)
		}
	}

	lines = nil
	if err := install.ApplyObjects(ctx, c, r.Objects, false, progress); err != nil {
		t.Fatalf("install: %v", err)
	}
	if !slices.Contains(lines, "customresourcedefinition.apiextensions.k8s.io/clusters.flotilla.dev serverside-applied and established") ||
		!slices.Contains(lines, "customresourcedefinition.apiextensions.k8s.io/"+theirs.Name+" kept (installed by someone else)") {
		t.Errorf("install printed:\n%s", strings.Join(lines, "\n"))
	}
	versions := resourceVersions(ctx, t, c, r.Objects)
	if err := install.ApplyObjects(ctx, c, r.Objects, false, nil); err != nil {
		t.Fatalf("install again: %v", err)
	}
	again := resourceVersions(ctx, t, c, r.Objects)
	for name, v := range versions {
		if again[name] != v {
			t.Errorf("installing again changed %s (resourceVersion %s -> %s)", name, v, again[name])
		}
	}
	kro := &unstructured.Unstructured{}
	kro.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.Get(ctx, client.ObjectKey{Name: theirs.Name}, kro); err != nil {
		t.Fatal(err)
	}
	if _, ours := kro.GetAnnotations()[install.AnnotationInstalledBy]; ours {
		t.Errorf("install took over kro's CRD, installed by someone else")
	}
}

// resourceVersions reads every object back and returns its resourceVersion by kind and name.
func resourceVersions(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatalf("%s %s after install: %v", o.GetKind(), o.GetName(), err)
		}
		out[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = got.GetResourceVersion()
	}
	return out
}
