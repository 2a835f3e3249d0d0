package ownerkinds

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

func TestPlacementUsers(t *testing.T) {
	ctx := context.Background()
	api := func(name, placementNamespace, placement string) *flotillav1.APIPropagation {
		return &flotillav1.APIPropagation{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flotillav1.APIPropagationSpec{PlacementRef: flotillav1.PlacementRef{Namespace: placementNamespace, Name: placement}}}
	}
	labelled := func(namespace, name, placement string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace(namespace)
		u.SetName(name)
		u.SetLabels(map[string]string{flotillav1.LabelPlacement: placement})
		return u
	}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		api("a", "flotilla-system", "fleet"), api("b", "flotilla-system", "other"), api("c", "team", "fleet"),
		labelled("team", "x", "fleet"), labelled("team", "y", "other"), labelled("elsewhere", "z", "fleet"),
	).Build()
	fleet := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "fleet"}}

	users := PlacementUsers(ctx, hub, fleet, &flotillav1.APIPropagationList{}, func(o client.Object) client.ObjectKey {
		p := o.(*flotillav1.APIPropagation) // the list's own items
		return client.ObjectKey{Namespace: p.Spec.PlacementRef.Namespace, Name: p.Spec.PlacementRef.Name}
	})
	if reqs := Requests(users); len(reqs) != 1 || reqs[0].Name != "a" || reqs[0].Namespace != "" {
		t.Errorf("users of flotilla-system/fleet: %v", reqs)
	}

	teamFleet := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "fleet"}}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("v1")
	list.SetKind("ConfigMapList")
	users = PlacementUsers(ctx, hub, teamFleet, list, func(o client.Object) client.ObjectKey {
		return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[flotillav1.LabelPlacement]}
	})
	if reqs := Requests(users); len(reqs) != 1 || reqs[0].Namespace != "team" || reqs[0].Name != "x" {
		t.Errorf("users of team/fleet: %v", reqs)
	}
}
