package ledger_test

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// A record's spec.work written while the record is removed (its owner deleted) is not an
// error: the apply, meeting no record, tries to create one of spec.work alone, which the API
// server refuses, and nothing is left to write. Before, the refusal was logged as an error
// with a stack trace in every soak that deleted owners.
func TestWorkWrittenAsTheRecordIsRemovedIsDropped(t *testing.T) {
	fleet := fleettest.Start(t, localfleet.PlaneSpec{Name: "hub", Role: localfleet.RoleHub})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := fleet.Plane("hub").RESTConfig()
	if err := install.ApplyForSelf(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	owner := ledger.Owner{Owner: render.Owner{Kind: "Propagation", Namespace: "team", Name: "web"},
		APIVersion: flotillav1.GroupVersion.String(), ObjectKind: "Propagation", UID: "0c4a5e3e-1d7a-4d9e-9a53-3b0f1b6a7f10"}
	removing := &removingWriter{Writer: admin}
	l := &ledger.Ledger{Hub: admin, Ahead: removing}
	if _, err := l.Prepare(ctx, owner, "a", []string{"/ConfigMap"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	removing.arm(func() {
		if err := l.Remove(ctx, owner.Owner, "a"); err != nil {
			t.Error(err)
		}
	})
	if err := l.WriteWork(ctx, owner.Owner, "a", flotillav1.DeliveryWork{Revision: "r1"}); err != nil {
		t.Fatalf("spec.work written as the record was removed: %v", err)
	}
	if !removing.fired() {
		t.Fatal("the write never reached the API server: the test proves nothing")
	}
	err = admin.Get(ctx, l.Key(owner.Owner, "a"), &flotillav1.Delivery{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the record is back after its removal (%v)", err)
	}
}

// removingWriter runs a function once just before the next apply it passes on.
type removingWriter struct {
	client.Writer
	mu     sync.Mutex
	before func()
	done   bool
}

func (w *removingWriter) arm(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.before = f
}

func (w *removingWriter) fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

func (w *removingWriter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	w.mu.Lock()
	f := w.before
	w.before = nil
	w.done = w.done || f != nil
	w.mu.Unlock()
	if f != nil {
		f()
	}
	return w.Writer.Apply(ctx, obj, opts...)
}
