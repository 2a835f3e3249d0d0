package transparent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/transparent"
)

// TestPinsHoldACopy: the flotilla.dev/revision-pins annotation holds one cluster's copy of a
// transparent-mode object at a kept revision while the others take the hub's change, as a
// Propagation's spec.revisionPins does; its record names the pinned revision, `flotilla plan`
// (Preview) shows it, and removing the pin lets the cluster catch up.
func TestPinsHoldACopy(t *testing.T) {
	ctx := context.Background()
	fleet, c, spokes := startAudited(t, "a", "b")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", Labels: map[string]string{flotillav1.LabelPlacement: "all"}},
		Data: map[string]string{"color": "blue"}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		cm,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	owner := render.Owner{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	colors := func(want map[string]string) {
		t.Helper()
		fleettest.Eventually(t, 60*time.Second, fmt.Sprintf("the copies are %v", want), func() error {
			for cluster, color := range want {
				live := &corev1.ConfigMap{}
				if err := spokes[cluster].Get(ctx, client.ObjectKeyFromObject(cm), live); err != nil {
					return err
				}
				if live.Data["color"] != color {
					return fmt.Errorf("%s's copy is %s", cluster, live.Data["color"])
				}
			}
			return nil
		})
	}
	colors(map[string]string{"a": "blue", "b": "blue"})
	blue := workOf(ctx, t, c, owner, "a", "")

	edit := func(color, pins string) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
				return err
			}
			cm.Data["color"] = color
			if cm.Annotations = map[string]string{}; pins != "" {
				cm.Annotations[flotillav1.AnnotationRevisionPins] = pins
			}
			return c.Update(ctx, cm)
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// The hub's change and a's pin in one edit: a stays blue, b turns green.
	edit("green", "a="+blue)
	colors(map[string]string{"b": "green"})
	if got := workOf(ctx, t, c, owner, "a", blue); got != blue {
		t.Errorf("a's record names revision %s, want the pinned %s", got, blue)
	}
	colors(map[string]string{"a": "blue"})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), u); err != nil {
		t.Fatal(err)
	}
	d, err := transparent.Preview(ctx, c, u, hub.RecordOwners())
	if err != nil {
		t.Fatal(err)
	}
	for _, cd := range d.Clusters {
		got, _, _ := unstructured.NestedString(cd.Objects[0].Object, "data", "color")
		if want := map[string]string{"a": blue, "b": ""}[cd.Cluster]; cd.Pinned != want || (got == "blue") != (cd.Cluster == "a") {
			t.Errorf("plan of %s: pinned %q with color %s; want pinned %q", cd.Cluster, cd.Pinned, got, want)
		}
	}

	// A pin that cannot be read changes nothing anywhere (the spokes' audit logs) and says why
	// on the object.
	broken := time.Now()
	edit("red", "a")
	fleettest.Eventually(t, 30*time.Second, "an InvalidSpec Event names the annotation", func() error {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "settings" && ev.Reason == flotillav1.ReasonInvalidSpec {
				return nil
			}
		}
		return fmt.Errorf("no InvalidSpec Event among %d", len(events.Items))
	})
	for _, spoke := range []string{"a", "b"} {
		events, err := fleet.Plane(spoke).AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == "configmaps" &&
				ev.ObjectRef.Name == "settings" && ev.StageTimestamp.After(broken) {
				t.Errorf("%s: %s %s after the pins became unreadable", spoke, ev.Verb, ev.RequestURI)
			}
		}
	}
	colors(map[string]string{"a": "blue", "b": "green"})

	// Unpinned, a catches up.
	edit("red", "")
	colors(map[string]string{"a": "red", "b": "red"})
}

// workOf returns the revision the record of owner on cluster names (spec.work), once it is not
// other ("" waits for any).
func workOf(ctx context.Context, t *testing.T, c client.Client, owner render.Owner, cluster, other string) string {
	t.Helper()
	var revision string
	fleettest.Eventually(t, 30*time.Second, cluster+"'s record names a revision", func() error {
		var records flotillav1.DeliveryList
		if err := c.List(ctx, &records, client.InNamespace(owner.Namespace), client.MatchingLabels{flotillav1.LabelOwner: owner.LabelValue()}); err != nil {
			return err
		}
		for _, rec := range records.Items {
			if rec.Spec.Cluster == cluster && rec.Spec.Work != nil && rec.Spec.Work.Revision != "" && (other == "" || rec.Spec.Work.Revision == other) {
				revision = rec.Spec.Work.Revision
				return nil
			}
		}
		return fmt.Errorf("no record of %s names a revision yet", cluster)
	})
	return revision
}
