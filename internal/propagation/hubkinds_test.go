package propagation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func TestKindAccess(t *testing.T) {
	served := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
			{Name: "pods/binding", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
			{Name: "componentstatuses", Kind: "ComponentStatus", Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
		}},
	}}}
	// The hub controller may list and watch everything but widgets, which it may only list.
	reviews := func(fail error) client.Client {
		return fake.NewClientBuilder().WithScheme(install.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
				if fail != nil {
					return fail
				}
				r := obj.(*authorizationv1.SelfSubjectAccessReview)
				a := r.Spec.ResourceAttributes
				r.Status.Allowed = a.Resource != "widgets" || a.Verb == "list"
				return nil
			},
		}).Build()
	}
	mapping := func(group, version, kind, resource string) *meta.RESTMapping {
		gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
		return &meta.RESTMapping{GroupVersionKind: gvk, Resource: gvk.GroupVersion().WithResource(resource), Scope: meta.RESTScopeNamespace}
	}
	cases := []struct {
		name        string
		mapping     *meta.RESTMapping
		reviewErr   error
		invalid     bool // the spec must change
		unavailable bool // the hub cannot now
		message     string
	}{
		{name: "listed and watched", mapping: mapping("", "v1", "ConfigMap", "configmaps")},
		{name: "create-only", mapping: mapping("", "v1", "Binding", "bindings"), invalid: true,
			message: "v1 Binding cannot be watched (the API serves only create, not list and watch); it cannot be selected"},
		{name: "listed, not watched", mapping: mapping("", "v1", "ComponentStatus", "componentstatuses"), invalid: true,
			message: "v1 ComponentStatus cannot be watched (the API serves only get, list"},
		{name: "denied by the hub's RBAC", mapping: mapping("example.com", "v1", "Widget", "widgets"), unavailable: true,
			message: "example.com/v1 Widget cannot be watched: the hub controller may not watch widgets cluster-wide"},
		{name: "group version not discovered (an aggregated API down)", mapping: mapping("metrics.example.com", "v1", "Sample", "samples"), unavailable: true,
			message: "metrics.example.com/v1 Sample cannot be watched now: the hub cannot discover metrics.example.com/v1"},
		{name: "access not checkable", mapping: mapping("", "v1", "ConfigMap", "configmaps"), reviewErr: errors.New("hub unreachable"), unavailable: true,
			message: "v1 ConfigMap cannot be watched now: checking the hub controller's access failed: hub unreachable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := kindAccess{discovery: served, reviews: reviews(c.reviewErr)}.check(context.Background(), c.mapping)
			var invalid invalidSpecError
			var unavailable kindUnavailableError
			switch {
			case !c.invalid && !c.unavailable && err != nil:
				t.Fatalf("refused: %v", err)
			case c.invalid && !errors.As(err, &invalid):
				t.Fatalf("got %v (%T), want an invalid spec", err, err)
			case c.unavailable && !errors.As(err, &unavailable):
				t.Fatalf("got %v (%T), want the kind unavailable", err, err)
			}
			if c.message != "" && !strings.Contains(err.Error(), c.message) {
				t.Fatalf("message %q, want it to contain %q", err, c.message)
			}
		})
	}
}

// TestCacheReadsHaveADeadline: a kind whose hub cache never syncs holds the owner that selects
// it, within the read deadline, instead of its reconcile waiting for good.
func TestCacheReadsHaveADeadline(t *testing.T) {
	never := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err() // what a cache read returns when its informer did not sync in time
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithRESTMapper(mapper).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			return never(ctx)
		},
		Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return never(ctx)
		},
	}).Build()
	h := hubSelector{hub: hub, secrets: hub, readTimeout: 100 * time.Millisecond}
	p := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"},
		Spec: flotillav1.PropagationSpec{ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}})
	m := fromPropagation(&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"},
		Spec: flotillav1.PropagationSpec{Manifests: []flotillav1.ManifestSource{{Kind: "ConfigMap", Name: "manifests"}}}})
	for name, p := range map[string]propagator{"selector": p, "manifests": m} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the reconcile's
			defer cancel()
			_, _, err := h.selectObjects(ctx, p)
			var unavailable kindUnavailableError
			if !errors.As(err, &unavailable) || !strings.Contains(err.Error(), "the hub cache of v1 ConfigMap did not sync within 100ms") {
				t.Fatalf("got %v, want the kind unavailable", err)
			}
			if ctx.Err() != nil {
				t.Fatal("the read waited for the reconcile's deadline")
			}
		})
	}
	// The reconcile's own deadline is not the kind's fault.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := readCache(ctx, time.Minute, corev1.SchemeGroupVersion.WithKind("ConfigMap"), never)
	var unavailable kindUnavailableError
	if errors.As(err, &unavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the reconcile's deadline", err)
	}
}
