package ownerkinds

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

func TestDriftEvent(t *testing.T) {
	long := deliver.Drift{Object: "configmap team/web", Fields: []string{strings.Repeat("/data/x", 300)}, Corrected: true}
	for _, c := range []struct {
		name        string
		d           deliver.Drift
		leftBecause string
		eventType   string
		reason      string
		contains    []string
	}{
		{"corrected", deliver.Drift{Object: "configmap team/web", Fields: []string{"/data/v"}, Corrected: true, Manager: "kubectl"},
			"", corev1.EventTypeNormal, ReasonDriftCorrected, []string{"cluster eu-1: configmap team/web changed at /data/v by kubectl; corrected"}},
		{"left, with why", deliver.Drift{Object: "configmap team/web", Fields: []string{"/data/v"}},
			"strategy.drift or mode", corev1.EventTypeWarning, flotillav1.ReasonDrifted, []string{"/data/v; left as is (strategy.drift or mode)"}},
		{"left", deliver.Drift{Object: "configmap team/web", Deleted: true},
			"", corev1.EventTypeWarning, flotillav1.ReasonDrifted, []string{"was deleted; left as is"}},
		{"a fight", deliver.Drift{Object: "configmap team/web", Fields: []string{"/data/v"}, Fighting: true, Corrected: true},
			"", corev1.EventTypeWarning, flotillav1.ReasonFighting, []string{"changed back after every correction", "backoff"}},
		{"cut", long, "", corev1.EventTypeNormal, ReasonDriftCorrected, []string{"…"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eventType, reason, msg := driftEvent("eu-1", c.d, c.leftBecause)
			if eventType != c.eventType || reason != c.reason {
				t.Errorf("%s %s, want %s %s", eventType, reason, c.eventType, c.reason)
			}
			for _, want := range c.contains {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			if n := len([]rune(msg)); n > maxEventMessage {
				t.Errorf("message of %d characters", n)
			}
		})
	}
}

// TestDriftEventsGoOnTheOwnersObject: the Event is emitted on the object Object reads, without
// holding the caller.
func TestDriftEventsGoOnTheOwnersObject(t *testing.T) {
	web := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(web).Build()
	recorder := &objectRecorder{FakeRecorder: record.NewFakeRecorder(10), on: make(chan client.Object, 10)}
	events := DriftEvents{Recorder: recorder, Object: ObjectOf(hub, func(render.Owner) client.Object { return &flotillav1.Propagation{} })}
	events.Record(render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "eu-1",
		deliver.Drift{Object: "configmap team/web", Fields: []string{"/data/v"}, Corrected: true})
	select {
	case ev := <-recorder.Events:
		if !strings.HasPrefix(ev, "Normal DriftCorrected cluster eu-1: configmap team/web") {
			t.Errorf("event %q", ev)
		}
		if on := <-recorder.on; on.GetNamespace() != "team" || on.GetName() != "web" {
			t.Errorf("the Event is on %s/%s", on.GetNamespace(), on.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Event")
	}

	// An owner whose object is gone has no Event.
	events.Record(render.Owner{Kind: "Propagation", Namespace: "team", Name: "gone"}, "eu-1", deliver.Drift{Object: "configmap team/gone", Corrected: true})
	// Not set up: nothing, and nothing read.
	DriftEvents{}.Record(render.Owner{Kind: "Propagation", Name: "web"}, "eu-1", deliver.Drift{})
	events.Record(render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "eu-2", deliver.Drift{Object: "configmap team/web", Deleted: true})
	select {
	case ev := <-recorder.Events:
		if !strings.Contains(ev, "cluster eu-2") {
			t.Errorf("event %q is not the one of the object that exists", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Event")
	}
}

// objectRecorder is a FakeRecorder that also says which object each Event is on.
type objectRecorder struct {
	*record.FakeRecorder
	on chan client.Object
}

func (r *objectRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	r.on <- obj.(client.Object)
	r.FakeRecorder.Event(obj, eventType, reason, message)
}

// TestDriftEventsDoNotWaitForASlowHub: deliver workers call Record; a hub cache that does not
// answer must not hold them, and the read behind the Event has a deadline.
func TestDriftEventsDoNotWaitForASlowHub(t *testing.T) {
	deadlines := make(chan bool, 1)
	testDone := make(chan struct{})
	defer close(testDone)
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			_, ok := ctx.Deadline()
			deadlines <- ok
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-testDone:
				return errors.New("test over")
			}
		},
	}).Build()
	events := DriftEvents{Recorder: record.NewFakeRecorder(10), Object: ObjectOf(hub, func(render.Owner) client.Object { return &flotillav1.Propagation{} })}
	done := make(chan struct{})
	go func() {
		defer close(done)
		events.Record(render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"}, "a", deliver.Drift{Object: "configmap team/web"})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record waits for a slow hub, holding the deliver worker")
	}
	select {
	case ok := <-deadlines:
		if !ok {
			t.Fatal("the hub read behind a drift Event has no deadline")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the drift Event never read its object")
	}
}
