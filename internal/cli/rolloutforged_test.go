package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// forged is an Event anyone who may create Events in the namespace can write about obj: any
// reason, message and lastTimestamp (a day ahead), created (by the API server) at created.
func forged(obj client.Object, kind, name string, phase flotillav1.RolloutPhase, msg string, created time.Time) *corev1.Event {
	ev := rolloutEvent(obj, kind, name, phase, msg, 0)
	ev.CreationTimestamp = metav1.NewTime(created.Truncate(time.Second))
	ev.LastTimestamp = metav1.NewTime(time.Now().Add(24 * time.Hour))
	return ev
}

func annotationOf(t *testing.T, hub client.Client, obj client.Object, key string) string {
	t.Helper()
	if err := hub.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()[key]
}

// TestRolloutIgnoresForgedEvents: Events on a transparent Deployment and an RGD that someone
// wrote (of another revision, with a lastTimestamp in the future, naming a stage that does not
// wait) change neither the revision approve and undo write nor the stage approve approves, and
// status does not report them.
func TestRolloutIgnoresForgedEvents(t *testing.T) {
	hub := ownersHub(t)
	ctx := context.Background()
	web := &appsv1.Deployment{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "webapp"}, rgd); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*corev1.Event{
		// The newest created, of a revision not the newest kept.
		forged(web, "Deployment", "web.forged-1", flotillav1.RolloutWaitingForApproval,
			"revision web-v1: stage first waits for approval: flotilla.dev/approve=first@web-v1", time.Now()),
		// Of the newest kept revision, created before the genuine ones but last "seen" tomorrow.
		forged(web, "Deployment", "web.forged-2", flotillav1.RolloutComplete, "revision web-v2: every cluster runs it", time.Now().Add(-time.Hour)),
		forged(rgd, "ResourceGraphDefinition", "webapp.forged-1", flotillav1.RolloutComplete, "revision rgd-v1: every cluster runs it", time.Now()),
		forged(rgd, "ResourceGraphDefinition", "webapp.forged-2", flotillav1.RolloutWaitingForApproval,
			"revision rgd-v2: stage first waits for approval: flotilla.dev/approve=first@rgd-v2", time.Now()),
	} {
		if err := hub.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}

	out, err := run(t, hub, "rollout", "status", "deployment/web", "-n", "shop")
	for _, want := range []string{"revision web-v2 WaitingForApproval", "advisory", "anyone who may create Events in namespace shop", "Events of other revisions ignored"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("status with forged Events: error %v, output lacks %q:\n%s", err, want, out)
		}
	}
	if _, err := run(t, hub, "rollout", "approve", "deployment/web", "-n", "shop"); err != nil {
		t.Fatal(err)
	}
	if got := annotationOf(t, hub, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}, flotillav1.AnnotationApprove); got != "second@web-v2" {
		t.Errorf("approve with forged Events wrote %q, want second@web-v2", got)
	}
	if _, err := run(t, hub, "rollout", "undo", "deployment/web", "-n", "shop"); err != nil {
		t.Fatal(err)
	}
	if got := annotationOf(t, hub, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}, flotillav1.AnnotationUndo); got != "web-v1@web-v2" {
		t.Errorf("undo with forged Events wrote %q, want web-v1@web-v2", got)
	}

	// An RGD: the forged Complete (an earlier revision) leaves it Halted at rgd-v3; undo
	// returns rgd-v3 to rgd-v2 whatever the Events say.
	out, err = run(t, hub, "rollout", "status", "rgd/webapp")
	var exit ExitError
	if !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out, "revision rgd-v3 Halted") || strings.Contains(out, "Complete") {
		t.Errorf("status of an RGD with a forged Complete: %v, output:\n%s", err, out)
	}
	if _, err := run(t, hub, "rollout", "undo", "rgd/webapp"); err != nil {
		t.Fatal(err)
	}
	if got := annotationOf(t, hub, &kro.ResourceGraphDefinition{ObjectMeta: metav1.ObjectMeta{Name: "webapp"}}, flotillav1.AnnotationUndo); got != "rgd-v2@rgd-v3" {
		t.Errorf("undo of an RGD with forged Events wrote %q, want rgd-v2@rgd-v3", got)
	}

	// A forged Event of the right revision, newest, naming a stage that does not wait for
	// approval: approve refuses it and asks for --stage; --stage is checked against the
	// Placement too.
	if err := hub.Create(ctx, forged(web, "Deployment", "web.forged-3", flotillav1.RolloutWaitingForApproval,
		"revision web-v2: stage first waits for approval: flotilla.dev/approve=first@web-v2", time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := hub.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"flotilla.dev/approve":null}}}`))); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, hub, "rollout", "approve", "deployment/web", "-n", "shop")
	wantError(t, err, `stage "first"`, "placement shop/staged", "pass --stage")
	_, err = run(t, hub, "rollout", "approve", "deployment/web", "-n", "shop", "--stage", "first")
	wantError(t, err, `stage "first" is not a stage of placement shop/staged that requires approval`, "those that do: second")
	_, err = run(t, hub, "rollout", "approve", "deployment/web", "-n", "shop", "--stage", "nosuch")
	wantError(t, err, `stage "nosuch"`)
	if got := annotationOf(t, hub, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}, flotillav1.AnnotationApprove); got != "" {
		t.Errorf("a refused approve wrote %q", got)
	}
	if _, err := run(t, hub, "rollout", "approve", "deployment/web", "-n", "shop", "--stage", "second"); err != nil {
		t.Fatal(err)
	}
	if got := annotationOf(t, hub, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}, flotillav1.AnnotationApprove); got != "second@web-v2" {
		t.Errorf("approve --stage second wrote %q, want second@web-v2", got)
	}
}

// TestRolloutStatusWatchWaitsForTheLatestChange: right after a change, status.rollout still
// shows the earlier revision Complete (and observedGeneration lags): --watch waits for the
// rollout of the newest kept revision instead of exiting 0 on the earlier one's result.
func TestRolloutStatusWatchWaitsForTheLatestChange(t *testing.T) {
	p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "settings", Generation: 2},
		Spec: flotillav1.PropagationSpec{PlacementRef: flotillav1.PlacementRef{Name: "all"}},
		Status: flotillav1.PropagationStatus{ObservedGeneration: 1, Rollout: &flotillav1.RolloutStatus{Revision: "propagation-settings-abc",
			Phase: flotillav1.RolloutComplete, Message: "every cluster runs it"}}}
	objs := append([]client.Object{p}, ownerRevisions(render.Owner{Kind: "Propagation", Namespace: "team", Name: "settings"},
		"propagation-settings-abc", "propagation-settings-def")...)
	// Each watch of the Propagation is the controller's next status write, delivered at once.
	steps := []func(*flotillav1.PropagationStatus){
		func(s *flotillav1.PropagationStatus) { s.ObservedGeneration = 2 },
		func(s *flotillav1.PropagationStatus) {
			s.Rollout = &flotillav1.RolloutStatus{Revision: "propagation-settings-def", Phase: flotillav1.RolloutComplete, Message: "every cluster runs it"}
		},
	}
	watches := 0
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(objs...).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Name} }).
		WithInterceptorFuncs(interceptor.Funcs{Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, _ ...client.ListOption) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(1, false)
			if _, owner := list.(*metav1.PartialObjectMetadataList); !owner {
				return w, nil
			}
			if watches >= len(steps) {
				t.Fatalf("status --watch watched %d times; the rollout of the newest revision completed before", watches+1)
			}
			cur := &flotillav1.Propagation{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), cur); err != nil {
				return nil, err
			}
			steps[watches](&cur.Status)
			watches++
			if err := c.Update(ctx, cur); err != nil {
				return nil, err
			}
			w.Modify(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "settings", ResourceVersion: cur.ResourceVersion}})
			return w, nil
		}}).Build()
	out, err := run(t, hub, "rollout", "status", "settings", "-n", "team", "--watch")
	for _, want := range []string{"waiting: status.observedGeneration 1 is behind metadata.generation 2",
		"waiting: status.rollout reports revision propagation-settings-abc, but the newest kept revision is propagation-settings-def",
		"revision propagation-settings-def Complete"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("status --watch after a change: error %v, output lacks %q:\n%s", err, want, out)
		}
	}
	if watches != len(steps) {
		t.Errorf("status --watch returned after %d changes, want %d:\n%s", watches, len(steps), out)
	}
}

// TestRolloutRGDRowsOutweighEvents: an RGD's Event saying Complete (of the right revision) is
// not taken while the APIPropagation's rows, which only Flotilla writes, show a cluster still
// pending: status says so.
func TestRolloutRGDRowsOutweighEvents(t *testing.T) {
	hub := ownersHub(t)
	ctx := context.Background()
	apis := &flotillav1.APIPropagation{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "apis"}, apis); err != nil {
		t.Fatal(err)
	}
	apis.Status.ClusterResults = []flotillav1.APIClusterResult{{Cluster: "eu-1", API: "webapp",
		Rollout: &flotillav1.ClusterRolloutState{Stage: "rest", State: flotillav1.RolloutClusterPending, Revision: "rgd-v2"}}}
	if err := hub.Update(ctx, apis); err != nil {
		t.Fatal(err)
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "webapp"}, rgd); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, forged(rgd, "ResourceGraphDefinition", "webapp.forged", flotillav1.RolloutComplete,
		"revision rgd-v3: every cluster runs it", time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, hub, "rollout", "status", "rgd/webapp")
	for _, want := range []string{"revision rgd-v3 Complete", "advisory", "not borne out: the Events say Complete, but cluster eu-1 is Pending at revision rgd-v2",
		"only Flotilla writes", "eu-1     rest   Pending"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("status of an RGD with a forged Complete: error %v, output lacks %q:\n%s", err, want, out)
		}
	}
}
