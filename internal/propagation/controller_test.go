package propagation

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

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
