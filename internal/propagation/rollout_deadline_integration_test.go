package propagation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestRolloutHaltsOnARevisionNeverReady: a Deployment's new revision whose pods no Node can
// take (a nodeSelector none matches) stays not Ready on the canary, a full spoke whose own
// controllers and scheduler run it. At maxFailures 0 the rollout halts once the progress
// deadline passes, naming the canary and why; the other spoke's audit log shows no write of
// the Deployment after the change; undo returns the canary to the revision before, which its
// controllers make Available again.
func TestRolloutHaltsOnARevisionNeverReady(t *testing.T) {
	e := startEnv(t, map[string]string{"canary": "eu", "later": "us"}, func(s *localfleet.PlaneSpec) {
		if s.Name == "canary" {
			s.Mode = localfleet.ModeFull
		}
	})
	ctx := context.Background()
	start := time.Now()
	zero := intstr.FromInt32(0)
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	e.create(t, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Spec: flotillav1.PlacementSpec{ClusterSelector: &metav1.LabelSelector{}, Rollout: &flotillav1.RolloutPolicy{
			Stages:           []flotillav1.RolloutStage{{Name: "canary", ClusterNames: []string{"canary"}}},
			ProgressDeadline: &metav1.Duration{Duration: 5 * time.Second}, MaxFailures: &zero}}})
	web := deployment("web")
	web.Spec.Replicas = ptr(int32(1))
	e.create(t, web)
	e.propagateDeployment(t, "web", "all")
	key := client.ObjectKeyFromObject(web)
	available := func(what string) {
		t.Helper()
		fleettest.Eventually(t, wait, what, func() error {
			d := &appsv1.Deployment{}
			if err := e.spokes["canary"].Get(ctx, key, d); err != nil {
				return err
			}
			if d.Spec.Template.Spec.NodeSelector != nil || d.Status.ObservedGeneration != d.Generation ||
				d.Status.UpdatedReplicas != 1 || d.Status.AvailableReplicas != 1 || d.Status.Replicas != 1 {
				return fmt.Errorf("nodeSelector %v, status %+v", d.Spec.Template.Spec.NodeSelector, d.Status)
			}
			return nil
		})
	}
	// The first revision is Available on the canary, made so by its own controllers.
	available("the canary runs the first revision, Available")
	e.onSpoke(t, "later", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, false, nil)
	fleettest.MarkAvailable(t, e.spokes["later"], key)
	if writes := e.writesOf(t, "later", "deployments", "web", start); writes == 0 {
		t.Fatal("later's audit log shows no write of the Deployment by Flotilla, not even its first delivery")
	}

	changed := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := e.hub.Get(ctx, key, d); err != nil {
			return err
		}
		d.Spec.Template.Spec.NodeSelector = map[string]string{"flotilla.dev/no-such-node": "true"}
		return e.hub.Update(ctx, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.onSpoke(t, "canary", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, false, nil)
	var status flotillav1.RolloutStatus
	fleettest.Eventually(t, wait, "the rollout halts at the canary", func() error {
		p := &flotillav1.Propagation{}
		if err := e.hub.Get(ctx, key, p); err != nil {
			return err
		}
		if r := p.Status.Rollout; r == nil || r.Phase != flotillav1.RolloutHalted {
			return fmt.Errorf("rollout %+v", p.Status.Rollout)
		}
		status = *p.Status.Rollout
		return nil
	})
	if !strings.Contains(status.Message, "canary: not Ready within 5s") {
		t.Errorf("halt message %q does not name the canary and why", status.Message)
	}
	if d := (&appsv1.Deployment{}); e.spokes["canary"].Get(ctx, key, d) != nil || d.Spec.Template.Spec.NodeSelector == nil {
		t.Errorf("the canary does not run the new revision: %+v", d.Spec.Template.Spec)
	}
	if writes := e.writesOf(t, "later", "deployments", "web", changed); writes != 0 {
		t.Errorf("later's Deployment written %d times after the change; the rollout halted before it", writes)
	}

	// Undo (what flotilla rollout undo writes): the canary returns to the first revision.
	kept, err := (&revisions.Store{Metadata: e.hub}).List(ctx, render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"})
	if err != nil || len(kept) != 2 || kept[1].Name != status.Revision {
		t.Fatalf("kept revisions %+v (%v), want the first and %s", kept, err, status.Revision)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, flotillav1.AnnotationUndo, kept[0].Name+"@"+status.Revision)
	if err := e.hub.Patch(ctx, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}},
		client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
	available("the canary runs the first revision again, Available")
	if writes := e.writesOf(t, "later", "deployments", "web", changed); writes != 0 {
		t.Errorf("later's Deployment written %d times by the halt and its undo", writes)
	}
}

// writesOf counts Flotilla's writes of an object of a spoke since a time (its audit log).
func (e *env) writesOf(t *testing.T, plane, resource, name string, since time.Time) int {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name &&
			!strings.Contains(ev.RequestURI, "dryRun=") && ev.StageTimestamp.After(since) {
			n++
		}
	}
	return n
}
