package hub

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/fleetapi"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/ownerkinds"
	"github.com/flotilla-dev/flotilla/internal/owners"
	"github.com/flotilla-dev/flotilla/internal/propagation"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// handlerCache hands out informers that only remember their handler, by the kind asked for.
type handlerCache struct {
	cache.Cache
	handlers map[string]toolscache.ResourceEventHandler
}

type handlerInformer struct {
	cache.Informer
	kind  string
	cache *handlerCache
}

type synced struct {
	toolscache.ResourceEventHandlerRegistration
}

func (synced) HasSynced() bool { return true }

func (i handlerInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.cache.handlers[i.kind] = h
	return synced{}, nil
}

func (c *handlerCache) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	switch obj.(type) {
	case *flotillav1.Propagation:
		kind = "Propagation"
	case *flotillav1.ClusterPropagation:
		kind = "ClusterPropagation"
	case *kro.ResourceGraphDefinition:
		kind = "ResourceGraphDefinition"
	}
	return handlerInformer{kind: kind, cache: c}, nil
}

// TestFeedOwnersKnowsEveryHubOwner checks that the owners the hub feeds are the ones the owner
// controllers deliver as (the same owner kinds, hence the same owner label values).
func TestFeedOwnersKnowsEveryHubOwner(t *testing.T) {
	c := &handlerCache{handlers: map[string]toolscache.ResourceEventHandler{}}
	reg := owners.New()
	if err := feedOwners(context.Background(), c, ownerKinds(nil), reg); err != nil {
		t.Fatal(err)
	}
	if !reg.WaitSynced(context.Background()) {
		t.Fatal("not synced")
	}
	add := func(kind string, obj client.Object) {
		t.Helper()
		h, ok := c.handlers[kind]
		if !ok {
			t.Fatalf("no informer of %s is fed", kind)
		}
		h.OnAdd(obj, true)
	}
	add("Propagation", &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}})
	add("ClusterPropagation", &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "base"}})
	add("ResourceGraphDefinition", &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets"}})
	deployment := &unstructured.Unstructured{}
	deployment.SetNamespace("team")
	deployment.SetName("app")
	deployment.SetLabels(map[string]string{flotillav1.LabelPlacement: "eu"})
	add("Deployment", deployment)
	unlabelled := &unstructured.Unstructured{}
	unlabelled.SetNamespace("team")
	unlabelled.SetName("plain")
	add("ConfigMap", unlabelled)

	deploymentKind := (&transparent.Reconciler{GVK: transparent.Kinds[0]}).OwnerKind()
	for _, want := range []struct {
		owner     render.Owner
		namespace string
		known     bool
	}{
		{render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "team", true},
		{render.Owner{Kind: "ClusterPropagation", Name: "base"}, "anywhere", true},
		{render.Owner{Kind: fleetapi.OwnerKind, Name: "widgets"}, "", true},
		{render.Owner{Kind: deploymentKind, Namespace: "team", Name: "app"}, "team", true},
		{render.Owner{Kind: "ConfigMap", Namespace: "team", Name: "plain"}, "team", false},
	} {
		if propagation.IsOwnerKind(want.owner.Kind) != (want.owner.Kind == "Propagation" || want.owner.Kind == "ClusterPropagation") {
			t.Errorf("%s is not the kind propagation delivers as", want.owner.Kind)
		}
		if got := reg.Keeps("eu-1", want.owner.LabelValue(), want.namespace); got != want.known {
			t.Errorf("%s known: %v, want %v", want.owner, got, want.known)
		}
	}
	if deploymentKind != "Deployment.apps" || !transparent.IsOwnerKind(deploymentKind) {
		t.Errorf("transparent mode's Deployment owner kind is %q", deploymentKind)
	}
}

// TestEveryOwnerKindIsRoutedToItsController checks the table the hub routes by: every kind has
// its controller, under the name its owners carry (what delivery results come back with).
func TestEveryOwnerKindIsRoutedToItsController(t *testing.T) {
	c := newControllers(Options{})
	kinds := ownerKinds(c).Kinds()
	if len(kinds) != 3+len(transparent.Kinds) {
		t.Fatalf("%d owner kinds", len(kinds))
	}
	for _, k := range kinds {
		if owner, _ := k.Owner(k.Record.New()); owner.Kind != k.Name {
			t.Errorf("kind %s: its objects are owners of kind %q", k.Name, owner.Kind)
		}
		var want ownerkinds.Controller
		switch {
		case propagation.IsOwnerKind(k.Name):
			want = c.propagation
		case k.Name == fleetapi.OwnerKind:
			want = c.fleetAPIs
		case transparent.IsOwnerKind(k.Name):
			want = c.transparent[k.Name]
		}
		if k.Controller == nil || k.Controller != want {
			t.Errorf("kind %s goes to %v, want %v", k.Name, k.Controller, want)
		}
	}
	for _, k := range ownerKinds(nil).Kinds() {
		if k.Controller != nil {
			t.Errorf("kind %s has a controller without controllers", k.Name)
		}
	}
}
