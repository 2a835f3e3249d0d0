package transparent_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestTransparentHoldsWhenPlacementChoosesNothing: a Placement that suddenly chooses no
// cluster (here a selector typo) removes nothing until the removal is confirmed. Flotilla would
// restore a wrongly deleted Deployment within moments, so only the spokes' audit logs prove
// that nothing was deleted.
func TestTransparentHoldsWhenPlacementChoosesNothing(t *testing.T) {
	ctx := context.Background()
	fleet, c, spokes := startAudited(t, "a", "b")
	placement := &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		placement,
		deployment("cart", 2, map[string]string{flotillav1.LabelPlacement: "all"}),
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	onSpokes := func(present bool) {
		t.Helper()
		for name, cl := range spokes {
			fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("cart on %s: %v", name, present), func() error {
				err := cl.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &appsv1.Deployment{})
				switch {
				case present && err != nil:
					return err
				case !present && !apierrors.IsNotFound(err):
					return fmt.Errorf("still there (%v)", err)
				}
				return nil
			})
		}
	}
	deletes := func() int {
		n := 0
		for _, s := range fleet.Spokes() {
			events, err := s.AuditEvents()
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events {
				if ev.Verb == "delete" && ev.ObjectRef.Resource == "deployments" && strings.HasPrefix(ev.UserAgent, "flotilla") {
					n++
				}
			}
		}
		return n
	}
	onSpokes(true)

	// The typo: the Placement now chooses no cluster.
	setSelector := func(selector map[string]string) {
		t.Helper()
		fleettest.Eventually(t, 10*time.Second, "placement updated", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(placement), placement); err != nil {
				return err
			}
			placement.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: selector}
			return c.Update(ctx, placement)
		})
	}
	// blocked waits for a PruneBlocked Event other than those seen, and returns the
	// confirmation it names.
	seen := map[string]bool{}
	blocked := func() string {
		t.Helper()
		var token string
		fleettest.Eventually(t, 30*time.Second, "a new PruneBlocked Event on the hub Deployment", func() error {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Name == "cart" && ev.Reason == flotillav1.ReasonPruneBlocked && strings.Contains(ev.Message, "chooses no cluster") && !seen[ev.Message] {
					seen[ev.Message] = true
					token = ev.Message[strings.LastIndex(ev.Message, "=")+1:]
					return nil
				}
			}
			return fmt.Errorf("none among %d events", len(events.Items))
		})
		return token
	}
	noDeletes := func(want int) {
		t.Helper()
		fleettest.Consistently(t, 3*time.Second, "no Deployment deleted", func() error {
			if n := deletes(); n != want {
				return fmt.Errorf("%d deletes of Deployments by Flotilla, want %d", n, want)
			}
			return nil
		})
	}
	setSelector(map[string]string{"fleet": "typo"})
	token := blocked()
	noDeletes(0)

	// Confirmed: the removal goes ahead.
	fleettest.Eventually(t, 10*time.Second, "removal confirmed", func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, d); err != nil {
			return err
		}
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[flotillav1.AnnotationConfirmPrune] = token
		return c.Update(ctx, d)
	})
	onSpokes(false)

	// The Placement is fixed: the object comes back. The confirmation stays on the object,
	// but it named that removal, of that Placement change: the next emptying is held again.
	setSelector(nil)
	onSpokes(true)
	setSelector(map[string]string{"fleet": "typo"})
	if again := blocked(); again == token {
		t.Errorf("the second emptying asks for the same confirmation %s as the first", token)
	}
	noDeletes(2)
}

// startAudited starts a hub running Flotilla and API-only spokes with audit logs, joined, and
// returns the fleet, a client of the hub and one of each spoke.
func startAudited(t *testing.T, names ...string) (*localfleet.Fleet, client.Client, map[string]client.Client) {
	t.Helper()
	specs := []localfleet.PlaneSpec{fleettest.Hub()}
	for _, name := range names {
		s := fleettest.APIOnlySpoke(name)
		s.AuditLog = true
		specs = append(specs, s)
	}
	fleet := fleettest.Start(t, specs...)
	c := hubtest.Install(t, fleet)
	hubtest.Run(t, fleet)
	spokes := map[string]client.Client{}
	for _, s := range fleet.Spokes() {
		if err := membership.Join(context.Background(), c, membership.JoinOptions{Name: s.Name(), Spoke: s.RESTConfig()}); err != nil {
			t.Fatal(err)
		}
		cl, err := client.New(s.RESTConfig(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		spokes[s.Name()] = cl
	}
	return fleet, c, spokes
}

// TestTransparentHoldsWhenLabelRemoved: removing flotilla.dev/placement from a hub object is
// one edit that would remove it from every cluster. It is held like an emptied Placement: a
// PruneBlocked Event on the hub object names the command that confirms, and the spokes' audit
// logs show that nothing was deleted until that very command (run as printed) confirmed it.
func TestTransparentHoldsWhenLabelRemoved(t *testing.T) {
	ctx := context.Background()
	fleet, c, spokes := startAudited(t, "a", "b")
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "shop"}, Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}}},
		deployment("cart", 2, map[string]string{flotillav1.LabelPlacement: "all"}),
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	onSpokes := func(present bool) {
		t.Helper()
		for name, cl := range spokes {
			fleettest.Eventually(t, 30*time.Second, fmt.Sprintf("cart on %s: %v", name, present), func() error {
				err := cl.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &appsv1.Deployment{})
				switch {
				case present && err != nil:
					return err
				case !present && !apierrors.IsNotFound(err):
					return fmt.Errorf("still there (%v)", err)
				}
				return nil
			})
		}
	}
	deletes := func() int {
		n := 0
		for _, s := range fleet.Spokes() {
			events, err := s.AuditEvents()
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events {
				if ev.Verb == "delete" && ev.ObjectRef.Resource == "deployments" && strings.HasPrefix(ev.UserAgent, "flotilla") {
					n++
				}
			}
		}
		return n
	}
	onSpokes(true)

	// The edit: the label goes (as an apply of a manifest without it would do).
	fleettest.Eventually(t, 10*time.Second, "label removed", func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, d); err != nil {
			return err
		}
		delete(d.Labels, flotillav1.LabelPlacement)
		return c.Update(ctx, d)
	})
	var message string
	fleettest.Eventually(t, 30*time.Second, "a PruneBlocked Event on the hub Deployment", func() error {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("shop")); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Name == "cart" && ev.Reason == flotillav1.ReasonPruneBlocked && strings.Contains(ev.Message, "label "+flotillav1.LabelPlacement+" was removed") {
				message = ev.Message
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})
	fleettest.Consistently(t, 3*time.Second, "no Deployment deleted", func() error {
		if n := deletes(); n != 0 {
			return fmt.Errorf("%d deletes of Deployments by Flotilla", n)
		}
		return nil
	})

	// Confirmed with the command the Event prints, as printed: the removal goes ahead.
	_, command, found := strings.Cut(message, "with: ")
	want := "kubectl annotate --overwrite -n shop deployment.apps cart " + flotillav1.AnnotationConfirmPrune + "=clusters-"
	if !found || !strings.HasPrefix(command, want) {
		t.Fatalf("the Event names %q as the confirmation, want %q (message: %s)", command, want, message)
	}
	args := append(strings.Fields(command)[1:], "--kubeconfig", fleet.Hub().KubeconfigPath())
	if out, err := exec.Command(filepath.Join(localfleet.FindBinDir(), "kubectl"), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", command, err, out)
	}
	onSpokes(false)
	fleettest.Eventually(t, 30*time.Second, "the finalizer released and the confirmation used up", func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, d); err != nil {
			return err
		}
		if len(d.Finalizers) > 0 || d.Annotations[flotillav1.AnnotationConfirmPrune] != "" {
			return fmt.Errorf("finalizers %v, annotations %v", d.Finalizers, d.Annotations)
		}
		return nil
	})
}
