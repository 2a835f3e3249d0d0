package ledger

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func propagationOwners() Owners {
	return Owners{
		flotillav1.GroupVersion.WithKind("Propagation").GroupKind(): {
			New: func() client.Object { return &flotillav1.Propagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				return client.ObjectKey{Namespace: o.GetNamespace(), Name: o.(*flotillav1.Propagation).Spec.PlacementRef.Name}, nil
			},
		},
		flotillav1.GroupVersion.WithKind("ClusterPropagation").GroupKind(): {
			New: func() client.Object { return &flotillav1.ClusterPropagation{} },
			Placement: func(_ context.Context, _ client.Reader, o client.Object) (client.ObjectKey, error) {
				ref := o.(*flotillav1.ClusterPropagation).Spec.PlacementRef
				return client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, nil
			},
		},
	}
}

// readsAnyNamespace is a reader that, as a cache may, finds a cluster-scoped object whatever
// namespace the key names.
type readsAnyNamespace struct{ client.Reader }

func (r readsAnyNamespace) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*flotillav1.ClusterPropagation); ok {
		key.Namespace = ""
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// A record is believed only as the ledger writes it for a live owner: in the owner's namespace,
// referencing the owner's kind, name and UID; its owner's Placement is the one the owner names.
func TestTrustCheck(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "web-uid"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "p"}}}
	record := func(mutate func(*flotillav1.Delivery)) *flotillav1.Delivery {
		d := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "propagation.web.eu",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Name: "web", UID: "web-uid"}}},
			Spec: flotillav1.DeliverySpec{Cluster: "eu", Owner: flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: "team", Name: "web"}}}
		if mutate != nil {
			mutate(d)
		}
		return d
	}
	admin := &flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "base", UID: "base-uid"},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Namespace: "flotilla-system", Name: "fleet"}}}
	trust := Trust{Hub: readsAnyNamespace{fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner, admin).Build()}, Owners: propagationOwners()}
	cases := []struct {
		name   string
		rec    *flotillav1.Delivery
		reason string // "" when believed
	}{
		{"as the ledger writes it", record(nil), ""},
		{"another namespace", record(func(d *flotillav1.Delivery) { d.Namespace = "other" }), "not in its owner's namespace team"},
		{"no owner reference", record(func(d *flotillav1.Delivery) { d.OwnerReferences = nil }), "no owner reference"},
		{"a reference to another name", record(func(d *flotillav1.Delivery) { d.OwnerReferences[0].Name = "api" }), "no owner reference"},
		{"another UID", record(func(d *flotillav1.Delivery) { d.OwnerReferences[0].UID = types.UID("forged") }), "names UID forged"},
		{"an owner that does not exist", record(func(d *flotillav1.Delivery) {
			d.Spec.Owner.Name, d.OwnerReferences[0].Name = "gone", "gone"
		}), "does not exist"},
		{"an admin's ClusterPropagation claimed in the tenant's namespace", record(func(d *flotillav1.Delivery) {
			d.Spec.Owner.Kind, d.Spec.Owner.Name = "ClusterPropagation", "base"
			d.OwnerReferences[0].Kind, d.OwnerReferences[0].Name, d.OwnerReferences[0].UID = "ClusterPropagation", "base", "base-uid"
		}), "is not in namespace"},
		{"a kind Flotilla does not deliver for", record(func(d *flotillav1.Delivery) {
			d.Spec.Owner.APIVersion, d.Spec.Owner.Kind = "v1", "Secret"
		}), "no owner of kind Secret"},
	}
	for _, c := range cases {
		placement, reason, err := trust.Check(context.Background(), c.rec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.reason == "" && (reason != "" || placement != client.ObjectKey{Namespace: "team", Name: "p"}):
			t.Errorf("%s: refused (%q) or Placement %v, want believed for team/p", c.name, reason, placement)
		case c.reason != "" && !strings.Contains(reason, c.reason):
			t.Errorf("%s: reason %q, want one saying %q", c.name, reason, c.reason)
		}
	}
	if _, reason, _ := (Trust{Hub: trust.Hub}).Check(context.Background(), record(nil)); reason == "" {
		t.Errorf("without Owners a record was believed")
	}
}

// An owner's own records are believed only when they reference it (its UID, with Owners):
// a record someone else wrote for it names no cluster its division or cleanup would act on.
func TestRecordsOfTheLiveOwnerOnly(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: "web-uid"}}
	ro := render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}
	l := &Ledger{Owners: propagationOwners()}
	record := func(cluster string, uid types.UID) *flotillav1.Delivery {
		key := l.Key(ro, cluster)
		d := &flotillav1.Delivery{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{flotillav1.LabelOwner: ro.LabelValue()}},
			Spec: flotillav1.DeliverySpec{Cluster: cluster, Owner: flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: "team", Name: "web"}}}
		if uid != "" {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Name: "web", UID: uid}}
		}
		return d
	}
	l.Hub = fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner,
		record("forged-first", "forged"), record("eu", owner.UID), record("unreferenced", ""), record("us", owner.UID)).Build()
	records, err := l.Records(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Clusters(records), ","); got != "eu,us" {
		t.Errorf("records on %s, want eu,us (the owner's own)", got)
	}
}
