package deliver_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/deliver/decide"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// An owner on a spoke keeps metadata on its own object: written before its objects, what
// others set kept, the inventory shrunk after the prune. Removing its objects in deletion waves
// deletes the highest wave first and the next only once the previous one is gone, not merely
// terminating; then its finalizer is released.
func TestOwnerMetadataAndOrderedRemoval(t *testing.T) {
	ctx, spoke, admin := oneSpoke(t, true, "team")
	installWidgets(ctx, t, admin)
	w1 := widget("w1", nil)
	w1.SetLabels(map[string]string{"user": "mine"})
	if err := admin.Create(ctx, w1); err != nil {
		t.Fatal(err)
	}
	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})
	if err := d.Engage(ctx, "a", startSpoke(ctx, t, spoke)); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "Widget.example.dev", Namespace: "team", Name: "w1", Cluster: "a"}
	var objs []*unstructured.Unstructured
	for wave := 1; wave <= 3; wave++ {
		obj := rendered(t, owner, "team", fmt.Sprintf("cm-%d", wave))
		obj.SetAnnotations(map[string]string{"example.dev/wave": fmt.Sprint(wave)})
		obj, err := render.Render(obj, owner)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	render.Sort(objs)
	meta := widget("w1", nil)
	meta.SetLabels(map[string]string{"owned": "true"})
	meta.SetAnnotations(map[string]string{"inventory": "growing"})
	meta.SetFinalizers([]string{"example.dev/cleanup"})
	complete := func(what string) {
		t.Helper()
		fleettest.Eventually(t, 30*time.Second, what, func() error {
			if r, ok := d.Result(owner, "a"); !ok || !r.Complete {
				return fmt.Errorf("not complete: %+v", r)
			}
			return nil
		})
	}
	current := func() *unstructured.Unstructured {
		t.Helper()
		u := widget("w1", nil)
		if err := admin.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	t.Run("metadata before the objects, the inventory shrunk after the prune", func(t *testing.T) {
		d.Submit(deliver.Job{Owner: owner, Cluster: "a", Objects: objs, Revision: render.Revision(objs), Prune: true,
			OwnerMeta: &deliver.OwnerMeta{Object: meta, AnnotationsAfterPrune: map[string]string{"inventory": "exact"}}})
		complete("delivered")
		w := current()
		if w.GetLabels()["owned"] != "true" || w.GetLabels()["user"] != "mine" || w.GetAnnotations()["inventory"] != "exact" ||
			!slices.Equal(w.GetFinalizers(), []string{"example.dev/cleanup"}) {
			t.Errorf("widget metadata: labels %v annotations %v finalizers %v", w.GetLabels(), w.GetAnnotations(), w.GetFinalizers())
		}
		var order []string
		for _, ev := range auditEvents(t, spoke) {
			// The grant of the namespace's identity, written once before its first write
			// (nsidentity_integration_test.go), is not part of the order; nor is a write the
			// spoke refused while that fresh grant was not in its authorizer's cache yet (a
			// busy API server takes a moment; the deliverer retries it).
			if ev.Mutating() && ev.ObjectRef.Name != membership.NamespaceRoleBinding && ev.ResponseStatus.Code < 400 {
				order = append(order, ev.Verb+" "+ev.ObjectRef.Resource)
			}
		}
		want := []string{"patch widgets", "patch configmaps", "patch configmaps", "patch configmaps", "patch widgets"}
		if !slices.Equal(order, want) {
			t.Errorf("writes %v, want %v", order, want)
		}
	})

	t.Run("removal wave by wave, then the finalizer released", func(t *testing.T) {
		// The highest wave cannot go at once: something else holds it.
		held := &corev1.ConfigMap{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "cm-3"}, held); err != nil {
			t.Fatal(err)
		}
		held.Finalizers = []string{"example.dev/hold"}
		if err := admin.Update(ctx, held); err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, current()); err != nil {
			t.Fatal(err)
		}
		mark := len(auditEvents(t, spoke))
		release := widget("w1", nil)
		release.SetFinalizers([]string{"example.dev/cleanup"})
		d.Submit(deliver.Job{Owner: owner, Cluster: "a", Revision: render.Revision(nil), Prune: true, PruneOrder: "example.dev/wave",
			PruneKinds: render.ParseKinds(render.Kinds(objs)),
			Strategy:   decide.Strategy{PruneBudget: decide.Unbudgeted}, OwnerMeta: &deliver.OwnerMeta{Object: release, Release: true}})
		fleettest.Eventually(t, 30*time.Second, "the highest wave terminating", func() error {
			cm := &corev1.ConfigMap{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "cm-3"}, cm); err != nil {
				return err
			}
			if cm.DeletionTimestamp == nil {
				return fmt.Errorf("not deleted yet")
			}
			return nil
		})
		fleettest.Consistently(t, 2*time.Second, "the lower waves wait", func() error {
			for _, name := range []string{"cm-1", "cm-2"} {
				if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, &corev1.ConfigMap{}); err != nil {
					return fmt.Errorf("%s: %v", name, err)
				}
			}
			if len(current().GetFinalizers()) == 0 {
				return fmt.Errorf("the owner's finalizer was released while its objects remain")
			}
			return nil
		})
		held = &corev1.ConfigMap{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "cm-3"}, held); err != nil {
			t.Fatal(err)
		}
		held.Finalizers = nil
		if err := admin.Update(ctx, held); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 60*time.Second, "the owner gone", func() error {
			if err := admin.Get(ctx, client.ObjectKeyFromObject(w1), widget("w1", nil)); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v); result %+v", err, must(d.Result(owner, "a")))
			}
			return nil
		})
		// The API server logs a request once its response is sent: the owner may read as gone
		// before the log has the patch that released it.
		want := []string{"delete configmaps/cm-3", "delete configmaps/cm-2", "delete configmaps/cm-1", "patch widgets/w1"}
		fleettest.Eventually(t, 10*time.Second, "the audit log shows the removal in order", func() error {
			var order []string
			for _, ev := range auditEvents(t, spoke)[mark:] {
				if ev.Mutating() {
					order = append(order, ev.Verb+" "+ev.ObjectRef.Resource+"/"+ev.ObjectRef.Name)
				}
			}
			if !slices.Equal(order, want) {
				return fmt.Errorf("writes %v, want %v", order, want)
			}
			return nil
		})
	})
}

func must(r deliver.Result, _ bool) deliver.Result { return r }
