package deliver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/deliver"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// userAgent marks the deliverer's requests in the spoke's audit log.
const userAgent = "flotilla-deliver-test"

// An owner can be an object on a spoke (an instance of a fleet API): it delivers into its own
// cluster only, within its own namespace, and its state is written to its own status
// subresource. A status it already shows is not written again, not even after everything
// confirmed is forgotten (as after a restart): the spoke's audit log shows a read and no write.
func TestOwnerOnASpokeDeliversThereAndWritesItsStatus(t *testing.T) {
	ctx, spoke, admin := oneSpoke(t, true, "team", "other")
	installWidgets(ctx, t, admin)
	for _, name := range []string{"w1", "w2", "w3"} {
		if err := admin.Create(ctx, widget(name, nil)); err != nil {
			t.Fatal(err)
		}
	}

	d := deliver.New(ctx, func(render.Owner) {}, deliver.Options{VerifyInterval: -1})
	if err := d.Engage(ctx, "a", startSpoke(ctx, t, spoke)); err != nil {
		t.Fatal(err)
	}
	owner := render.Owner{Kind: "Widget.example.dev", Namespace: "team", Name: "w1", Cluster: "a"}
	child := rendered(t, owner, "team", "w1-settings")
	job := func(state string) deliver.Job {
		return deliver.Job{Owner: owner, Cluster: "a", Objects: []*unstructured.Unstructured{child},
			Revision: render.Revision([]*unstructured.Unstructured{child}), Prune: true,
			PruneKinds: render.ParseKinds(render.Kinds([]*unstructured.Unstructured{child})),
			Status:     []*unstructured.Unstructured{widget("w1", map[string]any{"state": state})}}
	}
	complete := func(owner render.Owner, cluster string) func() error {
		return func() error {
			if r, ok := d.Result(owner, cluster); !ok || !r.Complete {
				return fmt.Errorf("not delivered completely yet: %+v", r)
			}
			return nil
		}
	}

	d.Submit(job("ACTIVE"))
	fleettest.Eventually(t, 30*time.Second, "the child delivered and the owner's status written", complete(owner, "a"))
	cm := &corev1.ConfigMap{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "w1-settings"}, cm); err != nil {
		t.Fatalf("the child is not on the owner's cluster: %v", err)
	}
	if cm.Annotations[flotillav1.AnnotationOwner] != owner.String() {
		t.Fatalf("the child names owner %q, want %q", cm.Annotations[flotillav1.AnnotationOwner], owner)
	}
	wantState(ctx, t, admin, "w1", "ACTIVE")

	d.Submit(job("IN_PROGRESS"))
	fleettest.Eventually(t, 30*time.Second, "a new status written", func() error {
		return stateIs(ctx, admin, "w1", "IN_PROGRESS")
	})

	// Everything confirmed is forgotten, as after a restart: the status is read, not written.
	// The next change of status is then the one write: deliveries of one owner run one after
	// the other, so whatever the confirmation wrote would come before it.
	mark := len(auditEvents(t, spoke))
	d.Retry("a")
	fleettest.Eventually(t, 30*time.Second, "the owner's status read again", func() error {
		for _, e := range auditEvents(t, spoke)[mark:] {
			if e.Verb == "get" && e.ObjectRef.Resource == "widgets" && e.ObjectRef.Name == "w1" {
				return nil
			}
		}
		return fmt.Errorf("no read of widget w1 since the retry")
	})
	d.Submit(job("DONE"))
	fleettest.Eventually(t, 30*time.Second, "the next status written", func() error {
		return stateIs(ctx, admin, "w1", "DONE")
	})
	var writes []string
	for _, e := range auditEvents(t, spoke)[mark:] {
		if e.Mutating() {
			writes = append(writes, e.Verb+" "+e.RequestURI)
		}
	}
	if len(writes) != 1 || !strings.Contains(writes[0], "/widgets/w1/status") {
		t.Errorf("writes since the confirmation started: %q; want only the status patch of the next change", writes)
	}

	// Refused: another cluster, another namespace, and the status of an object the owner
	// neither is nor delivers.
	elsewhere := job("ACTIVE")
	elsewhere.Cluster = "b"
	d.Submit(elsewhere)
	fleettest.Eventually(t, 30*time.Second, "delivery to another cluster refused", func() error {
		r, ok := d.Result(owner, "b")
		if !ok || r.Complete || !r.Permanent || !strings.Contains(r.Message, "delivers there only") {
			return fmt.Errorf("result on another cluster: %+v", r)
		}
		return nil
	})
	tenant := render.Owner{Kind: "Widget.example.dev", Namespace: "team", Name: "w3", Cluster: "a"}
	outside := rendered(t, tenant, "other", "w3-settings")
	objs := []*unstructured.Unstructured{outside}
	mark = len(auditEvents(t, spoke))
	d.Submit(deliver.Job{Owner: tenant, Cluster: "a", Objects: objs, Revision: render.Revision(objs),
		Status: []*unstructured.Unstructured{widget("w2", map[string]any{"state": "ACTIVE"})}})
	fleettest.Eventually(t, 30*time.Second, "both refused", func() error {
		r, ok := d.Result(tenant, "a")
		if !ok || r.Failed != 2 || !r.Permanent {
			return fmt.Errorf("result: %+v", r)
		}
		if !strings.Contains(r.Message, "w3-settings") || !strings.Contains(r.Message, "only to the owner itself") {
			return fmt.Errorf("the message does not name both refusals: %s", r.Message)
		}
		return nil
	})
	for _, e := range auditEvents(t, spoke)[mark:] {
		if e.Mutating() || e.ObjectRef.Namespace == "other" || e.ObjectRef.Name == "w2" {
			t.Errorf("a refused delivery reached the spoke: %s %s", e.Verb, e.RequestURI)
		}
	}
}

// installWidgets installs a namespaced kind with a status subresource, and waits until the
// spoke serves it.
func installWidgets(ctx context.Context, t *testing.T, admin client.Client) {
	t.Helper()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	if err := admin.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 30*time.Second, "widgets served", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("example.dev/v1")
		list.SetKind("WidgetList")
		return admin.List(ctx, list)
	})
}

// startSpoke builds and starts the spoke's cluster as the inventory does: a cache of Flotilla's
// objects only.
func startSpoke(ctx context.Context, t *testing.T, spoke *localfleet.Plane) cluster.Cluster {
	t.Helper()
	cfg := spoke.RESTConfig()
	cfg.UserAgent = userAgent
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = install.Scheme()
		o.Cache.DefaultLabelSelector = render.ManagedSelector()
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cl.Start(ctx) }()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the spoke cache did not start")
	}
	return cl
}

func widget(name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
	u.SetAPIVersion("example.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace("team")
	u.SetName(name)
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func rendered(t *testing.T, owner render.Owner, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"owner": owner.Name}}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	out, err := render.Render(u, owner)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stateIs(ctx context.Context, admin client.Client, name, want string) error {
	u := widget(name, nil)
	if err := admin.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "state"); got != want {
		return fmt.Errorf("widget %s shows state %q, want %q", name, got, want)
	}
	for _, m := range u.GetManagedFields() {
		if m.Manager == deliver.FieldManager && m.Subresource == "status" {
			return nil
		}
	}
	return fmt.Errorf("widget %s: no status fields managed by %s", name, deliver.FieldManager)
}

func wantState(ctx context.Context, t *testing.T, admin client.Client, name, want string) {
	t.Helper()
	if err := stateIs(ctx, admin, name, want); err != nil {
		t.Fatal(err)
	}
}

// auditEvents returns the spoke's audit events of the deliverer's requests.
func auditEvents(t *testing.T, spoke *localfleet.Plane) []localfleet.AuditEvent {
	t.Helper()
	all, err := spoke.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var out []localfleet.AuditEvent
	for _, e := range all {
		if strings.HasPrefix(e.UserAgent, userAgent) {
			out = append(out, e)
		}
	}
	return out
}

// oneSpoke starts an API-only spoke named "a" (its API server audited when audit), with
// namespaces made, and returns a context that ends with the test and an admin client of it.
func oneSpoke(t *testing.T, audit bool, namespaces ...string) (context.Context, *localfleet.Plane, client.Client) {
	t.Helper()
	fleet := fleettest.Start(t, localfleet.PlaneSpec{Name: "a", Role: localfleet.RoleSpoke, Mode: localfleet.ModeAPIOnly, AuditLog: audit})
	spoke := fleet.Plane("a")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	admin, err := client.New(spoke.RESTConfig(), client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, spoke, admin
}
