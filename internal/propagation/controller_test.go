package propagation

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// TestNotifyDoesNotWaitForTheController: deliver workers notify the controller of every
// changed result; a controller that is not taking them (not started, stopped, or busy) must
// never hold a worker, however many arrive.
func TestNotifyDoesNotWaitForTheController(t *testing.T) {
	// A manager that is never started: nothing will ever take a notification.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: install.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10_000 {
			r.Notify(render.Owner{Kind: kindPropagation, Namespace: "team", Name: fmt.Sprintf("p%d", i)})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Notify blocks while the controller takes nothing")
	}
}

func ptr[T any](v T) *T { return &v }

func TestRecordDriftDoesNotWaitForASlowHub(t *testing.T) {
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
	r := &Reconciler{Hub: hub, recorder: record.NewFakeRecorder(10)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RecordDrift(render.Owner{Kind: kindPropagation, Namespace: "team", Name: "web"}, "a", deliver.Drift{Object: "configmap team/web"})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RecordDrift waits for a slow hub, holding the deliver worker")
	}
	select {
	case ok := <-deadlines:
		if !ok {
			t.Fatal("the hub read behind a drift Event has no deadline")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the drift Event never read its propagator")
	}
}
