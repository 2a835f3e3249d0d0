package instances_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/hub/hubtest"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/instances"
	"github.com/flotilla-dev/flotilla/internal/inventory"
	"github.com/flotilla-dev/flotilla/internal/kro"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
)

const wait = 60 * time.Second

// env is a hub running the inventory, the deliverer and the instance controller in one
// multicluster manager, and API-only spokes joined to it, with audit logs.
type env struct {
	fleet     *localfleet.Fleet
	spokes    map[string]client.Client
	graphs    *instances.Memory
	deliverer *deliver.Deliverer
}

func startEnv(t *testing.T, spokes ...string) *env {
	t.Helper()
	return startEnvWith(t, instances.Options{}, spokes...)
}

// startEnvWith is startEnv with the instance controller's options.
func startEnvWith(t *testing.T, opts instances.Options, spokes ...string) *env {
	t.Helper()
	planes := []localfleet.PlaneSpec{fleettest.Hub()}
	for _, name := range spokes {
		s := fleettest.APIOnlySpoke(name)
		s.AuditLog = true
		planes = append(planes, s)
	}
	fleet := fleettest.Start(t, planes...)
	hub := hubtest.Install(t, fleet)
	ctx, cancel := context.WithCancel(context.Background())
	scheme := install.Scheme()
	provider := inventory.New(scheme, inventory.Options{ProbeInterval: hubtest.ProbeInterval})
	skip := true
	mgr, err := mcmanager.New(fleet.Hub().RESTConfig(), provider, manager.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: &skip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	e := &env{fleet: fleet, spokes: map[string]client.Client{}, graphs: instances.NewMemory()}
	var controller *instances.Controller
	e.deliverer = deliver.New(ctx, func(owner render.Owner) {
		if owner.OnSpoke() {
			controller.Notify(owner)
		}
	}, deliver.Options{VerifyInterval: -1})
	controller = instances.New(e.graphs, e.deliverer, opts)
	if err := mgr.Add(e.deliverer); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(controller); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	for _, name := range spokes {
		p := fleet.Plane(name)
		if err := membership.Join(ctx, hub, membership.JoinOptions{Name: name, Spoke: p.RESTConfig()}); err != nil {
			t.Fatal(err)
		}
		if e.spokes[name], err = client.New(p.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// serve plays the RGD side for a spoke: it compiles the RGD against the spoke, installs the
// generated CRD there and waits until it is Established, then registers the graph.
func (e *env) serve(t *testing.T, spoke string, rgd *kro.ResourceGraphDefinition) *kro.Compiled {
	t.Helper()
	compiled := e.compile(t, spoke, rgd)
	e.installCRD(t, spoke, compiled)
	e.graphs.Serve(spoke, instances.Graph{Compiled: compiled, Revision: compiled.SpecHash()})
	return compiled
}

// installCRD installs a compiled RGD's CRD on a spoke, as generated (with kro's labels, as a kro
// there would install it), and waits until it is Established.
func (e *env) installCRD(t *testing.T, spoke string, compiled *kro.Compiled) {
	t.Helper()
	crd := compiled.CRD()
	crd.ResourceVersion = ""
	if err := e.spokes[spoke].Create(context.Background(), crd); err != nil {
		t.Fatalf("install the CRD on %s: %v", spoke, err)
	}
	fleettest.Eventually(t, wait, "CRD "+crd.Name+" Established on "+spoke, func() error {
		live := &extv1.CustomResourceDefinition{}
		if err := e.spokes[spoke].Get(context.Background(), client.ObjectKey{Name: crd.Name}, live); err != nil {
			return err
		}
		for _, c := range live.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Established")
	})
}

// serveCompiled registers a new revision of an RGD whose CRD the spoke serves already.
func (e *env) serveCompiled(t *testing.T, spoke string, rgd *kro.ResourceGraphDefinition) {
	t.Helper()
	compiled := e.compile(t, spoke, rgd)
	e.graphs.Serve(spoke, instances.Graph{Compiled: compiled, Revision: compiled.SpecHash()})
}

func (e *env) compile(t *testing.T, spoke string, rgd *kro.ResourceGraphDefinition) *kro.Compiled {
	t.Helper()
	return e.compileWith(t, spoke, rgd, kro.DefaultConfig())
}

func (e *env) compileWith(t *testing.T, spoke string, rgd *kro.ResourceGraphDefinition, cfg kro.Config) *kro.Compiled {
	t.Helper()
	target, err := kro.TargetForConfig(e.fleet.Plane(spoke).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := kro.Compile(rgd, target, cfg)
	if err != nil {
		t.Fatalf("compile %s against %s: %v", rgd.Name, spoke, err)
	}
	return compiled
}

// spokeUser is fleettest.SpokeUser on a spoke: edit in namespace, and the right to create
// instances of compiled there (the API server aggregates no CRD into edit on API-only
// spokes).
func (e *env) spokeUser(t *testing.T, spoke, namespace string, compiled *kro.Compiled) client.Client {
	t.Helper()
	ctx := context.Background()
	admin := e.spokes[spoke]
	fleettest.Grant(t, ctx, admin, namespace, fleettest.SpokeUser, "edit")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: compiled.InstanceResource().Resource + "-editor"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{compiled.InstanceKind().Group}, Resources: []string{compiled.InstanceResource().Resource}, Verbs: []string{"*"}}}}
	if err := admin.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	fleettest.Grant(t, ctx, admin, namespace, fleettest.SpokeUser, role.Name)
	user, err := client.New(fleettest.As(e.fleet.Plane(spoke).RESTConfig(), fleettest.SpokeUser), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return user
}

func (e *env) namespace(t *testing.T, spoke, name string) {
	t.Helper()
	if err := e.spokes[spoke].Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// writes lists Flotilla's mutating requests to a spoke that match, in the order the spoke
// logged them.
func (e *env) writes(t *testing.T, spoke string, match func(localfleet.AuditEvent) bool) []localfleet.AuditEvent {
	t.Helper()
	events, err := e.fleet.Plane(spoke).AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var out []localfleet.AuditEvent
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && match(ev) {
			out = append(out, ev)
		}
	}
	return out
}

func describe(events []localfleet.AuditEvent) string {
	var s []string
	for _, ev := range events {
		s = append(s, ev.Verb+" "+ev.RequestURI)
	}
	return strings.Join(s, "; ")
}

func readRGD(t *testing.T, path string) *kro.ResourceGraphDefinition {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rgd := &kro.ResourceGraphDefinition{}
	if err := yaml.Unmarshal(raw, rgd); err != nil {
		t.Fatal(err)
	}
	return rgd
}

func newInstance(c *kro.Compiled, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(c.InstanceKind())
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
