package sources_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/hub"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

const wait = 30 * time.Second

// logs holds everything the controllers log during the tests.
var logs syncBuffer

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	var w io.Writer = &logs
	if os.Getenv(fleettest.LogEnv) != "" {
		w = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(true)))
	os.Exit(fleettest.Main(m))
}

// env is a hub running Flotilla's controller with some importers, and API-only spokes with
// audit logs.
type env struct {
	fleet *localfleet.Fleet
	hub   client.Client
}

func startEnv(t *testing.T, opts sources.Options, prepare func(hub client.Client), spokes ...string) *env {
	t.Helper()
	specs := []localfleet.PlaneSpec{{Name: "hub", Role: localfleet.RoleHub, AuditLog: true}}
	for _, name := range spokes {
		s := fleettest.APIOnlySpoke(name)
		s.AuditLog = true
		specs = append(specs, s)
	}
	fleet := fleettest.Start(t, specs...)
	e := &env{fleet: fleet, hub: hubtest.Install(t, fleet)}
	e.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}})
	if prepare != nil {
		prepare(e.hub)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- hub.Run(ctx, fleet.Hub().RESTConfig(), hub.Options{MetricsAddr: "0", HealthAddr: "0",
			Inventory: inventory.Options{ProbeInterval: hubtest.ProbeInterval}, Sources: opts})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub controller: %v", err)
		}
	})
	return e
}

func (e *env) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.hub.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// update changes a hub object, retrying on conflicts.
func (e *env) update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return e.hub.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("update %s: %v", obj.GetName(), err)
	}
}

// kubeconfigOf returns a plane's admin kubeconfig, edited by mutate.
func kubeconfigOf(t *testing.T, p *localfleet.Plane, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(p.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(cfg)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cluster waits until the Cluster exists and check passes.
func (e *env) cluster(t *testing.T, name string, check func(*flotillav1.Cluster) error) *flotillav1.Cluster {
	t.Helper()
	c := &flotillav1.Cluster{}
	fleettest.Eventually(t, wait, "cluster "+name, func() error {
		if err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		if check != nil {
			return check(c)
		}
		return nil
	})
	return c
}

// ready checks a Cluster's Ready condition.
func ready(status metav1.ConditionStatus, reason string) func(*flotillav1.Cluster) error {
	return func(c *flotillav1.Cluster) error {
		for _, cond := range c.Status.Conditions {
			if cond.Type == flotillav1.ClusterReady {
				if cond.Status != status || cond.Reason != reason {
					return fmt.Errorf("Ready=%s/%s: %s", cond.Status, cond.Reason, cond.Message)
				}
				return nil
			}
		}
		return errors.New("no Ready condition yet")
	}
}

// gone waits until the Cluster does not exist.
func (e *env) gone(t *testing.T, name string) {
	t.Helper()
	fleettest.Eventually(t, wait, "cluster "+name+" deleted", func() error {
		err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, &flotillav1.Cluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// absent checks, over a window, that no Cluster of this name appears.
func (e *env) absent(t *testing.T, name string, window time.Duration) {
	t.Helper()
	fleettest.Consistently(t, window, "no cluster "+name, func() error {
		err := e.hub.Get(context.Background(), client.ObjectKey{Name: name}, &flotillav1.Cluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("cluster %s exists (%v)", name, err)
	})
}

// event waits for an Event with this reason on an object and returns its message.
func (e *env) event(t *testing.T, namespace, name, reason string) string {
	t.Helper()
	var msg string
	fleettest.Eventually(t, wait, fmt.Sprintf("event %s on %s/%s", reason, namespace, name), func() error {
		var list corev1.EventList
		if err := e.hub.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
			return err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == name {
				if ev.Reason == reason {
					msg = ev.Message
					return nil
				}
				seen = append(seen, ev.Reason)
			}
		}
		return fmt.Errorf("events seen: %v", seen)
	})
	return msg
}

// flotillaWrites lists the mutating requests Flotilla made to a plane that match.
func (e *env) flotillaWrites(t *testing.T, plane string, match func(localfleet.AuditEvent) bool) []string {
	t.Helper()
	events, err := e.fleet.Plane(plane).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && (match == nil || match(ev)) {
			out = append(out, ev.Verb+" "+ev.RequestURI)
		}
	}
	return out
}

// importerWrites counts the hub writes only importers make: Clusters (not their status) and
// Secrets in flotilla-system.
func (e *env) importerWrites(t *testing.T) int {
	return len(e.flotillaWrites(t, "hub", func(ev localfleet.AuditEvent) bool {
		switch ev.ObjectRef.Resource {
		case "clusters":
			return !strings.Contains(ev.RequestURI, "/status")
		case "secrets":
			return ev.ObjectRef.Namespace == "flotilla-system"
		}
		return false
	}))
}

func secret(namespace, name string, labels map[string]string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}, Data: data}
}

// installCRD creates a CRD from testdata on the hub and waits until it is Established.
func installCRD(t *testing.T, hub client.Client, file string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, wait, "CRD "+crd.Name+" established", func() error {
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not established")
	})
}

// probedAs waits until Flotilla probes the plane as this user: the spoke was re-engaged with
// the credentials that user holds.
func (e *env) probedAs(t *testing.T, plane, username string) {
	t.Helper()
	fleettest.Eventually(t, wait, "probes of "+plane+" as "+username, func() error {
		events, err := e.fleet.Plane(plane).AuditEvents()
		if err != nil {
			return err
		}
		for _, ev := range events {
			if strings.HasPrefix(ev.UserAgent, "flotilla") && ev.User.Username == username && strings.HasPrefix(ev.RequestURI, "/readyz") {
				return nil
			}
		}
		return errors.New("none yet")
	})
}

// noDeletes checks that Flotilla never deleted anything on a plane.
func (e *env) noDeletes(t *testing.T, plane string) {
	t.Helper()
	if d := e.flotillaWrites(t, plane, func(ev localfleet.AuditEvent) bool { return ev.Verb == "delete" || ev.Verb == "deletecollection" }); len(d) > 0 {
		t.Fatalf("Flotilla deleted on %s: %v", plane, d)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
