package fleetapis

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	toolswatch "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// TestTakeOverFromKro follows "Moving a cluster from its own kro to the hub" (docs/fleet-apis.md)
// with kro's real controller: spoke-1 runs kro, built from the kro module Flotilla uses, with the
// RGD of examples/fleet-api.yaml applied there and a WebService kro made ACTIVE. kro is stopped
// and the hub serves the same RGD everywhere. Watched throughout, the instance shows nothing but
// ACTIVE, and its Deployment, sampled, keeps its available replicas; the CRD, Deployment, Service, ReplicaSet and Pods
// keep their uids, the Deployment and Service carry Flotilla's owner label, and the spoke's audit
// log shows Flotilla neither deleting nor creating any of them. Flotilla then manages the
// instance: scaled with kubectl, its Deployment follows and it shows the new availableReplicas;
// deleted, its children go.
func TestTakeOverFromKro(t *testing.T) {
	_, fleet := startFleet(t, 0, map[string]string{"spoke-1": "eu-west", "spoke-2": "us-east"})
	hubKC := fleet.Hub().KubeconfigPath()
	kc := fleet.Plane("spoke-1").KubeconfigPath()
	spoke := newTakeoverSpoke(t, fleet.Plane("spoke-1"))

	kro := startKro(t, fleet.Plane("spoke-1"))
	mustKubectl(t, kc, "apply", "-f", writeRGDOf(t, "../../../examples/fleet-api.yaml"))
	eventuallyKubectl(t, kc, "Active", "get", "resourcegraphdefinition", "webservice.kro.run", "-o", "jsonpath={.status.state}")
	eventuallyKubectl(t, kc, "True", "get", "crd", "webservices.kro.run", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
	mustKubectl(t, kc, "create", "namespace", "shop")
	mustKubectl(t, kc, "create", "-f", "testdata/webservice.yaml")
	eventuallyKubectl(t, kc, "ACTIVE 2", "get", "webservice", "cart", "-n", "shop", "-o", "jsonpath={.status.state} {.status.availableReplicas}")
	before := spoke.uids(t)
	t.Logf("made by kro: %v", before)

	// The handover: kro stops, the hub serves the same RGD.
	states := spoke.watchStates(t)
	active := fleettest.Low(t, 100*time.Millisecond, 20, spoke.instanceActive)
	available := fleettest.Low(t, 100*time.Millisecond, 20, spoke.deploymentAvailable)
	handover := time.Now()
	kro.Stop()
	mustKubectl(t, hubKC, "apply", "-f", "../../../examples/fleet-api.yaml")
	eventuallyKubectl(t, hubKC, "2", "get", "apipropagation", "public-apis", "-o", "jsonpath={.status.servingClusters}")
	fleettest.Eventually(t, 90*time.Second, "the Deployment and Service carry Flotilla's owner label", func() error {
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
			if err := spoke.c.Get(context.Background(), cart, obj); err != nil {
				return err
			}
			if obj.GetLabels()[flotillav1.LabelOwner] == "" {
				return fmt.Errorf("%T: labels %v", obj, obj.GetLabels())
			}
		}
		return nil
	})
	// Taken over: the pass that follows the delivery finds the instance ACTIVE too, as the
	// watch will tell; a few seconds' window covers it.
	fleettest.Consistently(t, 3*time.Second, "the instance ACTIVE after the takeover", func() error {
		if v, err := spoke.instanceActive(); err == nil && v != 1 {
			return fmt.Errorf("not ACTIVE")
		}
		return nil
	})
	if low := active(); low != 1 {
		t.Errorf("the instance was sampled not ACTIVE during the handover")
	}
	if seen := states(); !slices.Equal(seen, []string{"ACTIVE"}) {
		t.Errorf("the instance showed states %q during the handover, want ACTIVE throughout", seen)
	}
	if low := available(); low < 2 {
		t.Errorf("the Deployment had %d available replicas at one point during the handover, want never fewer than 2", low)
	}
	after := spoke.uids(t)
	if !after.keeps(before) {
		t.Errorf("objects kro made were replaced in the handover:\nbefore %v\nafter  %v", before, after)
	}
	spoke.noneRecreated(t, handover)
	t.Logf("Flotilla's writes to spoke-1 in the handover: %s", spoke.flotillaWrites(t, handover))

	// Flotilla manages the instance now.
	mustKubectl(t, kc, "patch", "webservice", "cart", "-n", "shop", "--type=merge", "-p", `{"spec":{"replicas":3}}`)
	eventuallyKubectl(t, kc, "3/3", "get", "deployment", "cart", "-n", "shop", "-o", "jsonpath={.spec.replicas}/{.status.availableReplicas}")
	eventuallyKubectl(t, kc, "ACTIVE 3", "get", "webservice", "cart", "-n", "shop", "-o", "jsonpath={.status.state} {.status.availableReplicas}")
	if scaled := spoke.uids(t); !scaled.keeps(before) {
		t.Errorf("objects kro made were replaced when scaling:\nbefore %v\nafter  %v", before, scaled)
	}
	spoke.noneRecreated(t, handover)

	mustKubectl(t, kc, "delete", "webservice", "cart", "-n", "shop", "--wait=true", "--timeout=60s")
	assertAbsent(t, kc, "deployment/cart", "service/cart", "-n", "shop")
}

// cart is the WebService of testdata/webservice.yaml, and the name of its children.
var cart = client.ObjectKey{Namespace: "shop", Name: "cart"}

// startKro builds kro's controller from the kro module of Flotilla's go.mod, installs kro's
// CRDs on the plane and runs the controller against it until the test ends or it is stopped.
func startKro(t *testing.T, plane *localfleet.Plane) *localfleet.KroController {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	release, err := localfleet.FindKro(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, err := release.BuildController(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	kc := plane.KubeconfigPath()
	mustKubectl(t, kc, "apply", "--server-side", "-f", release.CRDDir())
	mustKubectl(t, kc, "wait", "--for=condition=Established", "--timeout=60s", "-f", release.CRDDir())
	ctrl, err := localfleet.StartKroController(dir, bin, kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kro %s's controller running against %s (pid %d)", release.Version, plane.Name(), ctrl.PID())
	t.Cleanup(func() {
		ctrl.Stop()
		if t.Failed() {
			t.Logf("kro's controller log (tail):\n%s", ctrl.LogTail(40))
		}
	})
	return ctrl
}

// writeRGDOf writes the ResourceGraphDefinition of a multi-document manifest alone to a file
// and returns its path: what a cluster running kro had applied of it.
func writeRGDOf(t *testing.T, manifest string) string {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.Contains(doc, "\nkind: ResourceGraphDefinition\n") {
			path := filepath.Join(t.TempDir(), "rgd.yaml")
			writeFile(t, path, doc+"\n")
			return path
		}
	}
	t.Fatalf("no ResourceGraphDefinition in %s", manifest)
	return ""
}

// takeoverSpoke reads the spoke kro ran on: the instance, its children and its audit log.
type takeoverSpoke struct {
	plane *localfleet.Plane
	c     client.Client
}

func newTakeoverSpoke(t *testing.T, plane *localfleet.Plane) *takeoverSpoke {
	t.Helper()
	cfg := plane.RESTConfig()
	cfg.Timeout = 5 * time.Second // a slow answer fails a sample, not the test
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &takeoverSpoke{plane: plane, c: c}
}

var (
	webServiceKind = schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebService"}
	crdKind        = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

func (s *takeoverSpoke) instance() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(webServiceKind)
	return u, s.c.Get(context.Background(), cart, u)
}

// instanceActive samples the instance: 1 when ACTIVE, else 0.
func (s *takeoverSpoke) instanceActive() (int64, error) {
	u, err := s.instance()
	if err != nil {
		return 0, err
	}
	if state, _, _ := unstructured.NestedString(u.Object, "status", "state"); state != "ACTIVE" {
		return 0, nil
	}
	return 1, nil
}

// shownState is the instance's status.state, with its Ready condition's message when it is
// not ACTIVE: what a user of the instance sees.
func shownState(u *unstructured.Unstructured) string {
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	if state == "ACTIVE" {
		return state
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == "Ready" {
			return fmt.Sprintf("%s (%v)", state, c["message"])
		}
	}
	return state
}

// watchStates records every state the instance shows from now on (a watch sees every write,
// where samples could miss a short one) until the returned stop, which returns them in order,
// without repeats.
func (s *takeoverSpoke) watchStates(t *testing.T) (stop func() []string) {
	t.Helper()
	u, err := s.instance()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(s.plane.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	instances := dc.Resource(webServiceKind.GroupVersion().WithResource("webservices")).Namespace(cart.Namespace)
	w, err := toolswatch.NewRetryWatcherWithContext(context.Background(), u.GetResourceVersion(), &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = "metadata.name=" + cart.Name
			return instances.Watch(ctx, o)
		}})
	if err != nil {
		t.Fatal(err)
	}
	states := []string{shownState(u)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			state := shownState(obj)
			if ev.Type == watch.Deleted {
				state = "(deleted)"
			}
			if states[len(states)-1] != state {
				states = append(states, state)
			}
		}
	}()
	var once sync.Once
	t.Cleanup(func() { once.Do(w.Stop) })
	return func() []string {
		select {
		case <-done:
			t.Error("the watch of the instance ended early: states may be missing")
		default:
		}
		once.Do(w.Stop)
		<-done
		return states
	}
}

func (s *takeoverSpoke) deploymentAvailable() (int64, error) {
	d := &appsv1.Deployment{}
	if err := s.c.Get(context.Background(), cart, d); err != nil {
		return 0, err
	}
	return int64(d.Status.AvailableReplicas), nil
}

// objectUIDs are the uids of the objects kro made for the instance and the workload they run.
type objectUIDs struct {
	CRD, Deployment, Service string
	ReplicaSets, Pods        []string
}

func (s *takeoverSpoke) uids(t *testing.T) objectUIDs {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdKind)
	d, svc := &appsv1.Deployment{}, &corev1.Service{}
	for _, get := range []struct {
		key client.ObjectKey
		obj client.Object
	}{{client.ObjectKey{Name: "webservices.kro.run"}, crd}, {cart, d}, {cart, svc}} {
		if err := s.c.Get(ctx, get.key, get.obj); err != nil {
			t.Fatal(err)
		}
	}
	out := objectUIDs{CRD: string(crd.GetUID()), Deployment: string(d.UID), Service: string(svc.UID)}
	selector := client.MatchingLabels{"app.kubernetes.io/name": cart.Name}
	rss, pods := &appsv1.ReplicaSetList{}, &corev1.PodList{}
	if err := s.c.List(ctx, rss, client.InNamespace(cart.Namespace), selector); err != nil {
		t.Fatal(err)
	}
	if err := s.c.List(ctx, pods, client.InNamespace(cart.Namespace), selector); err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss.Items {
		out.ReplicaSets = append(out.ReplicaSets, string(rs.UID))
	}
	for _, p := range pods.Items {
		out.Pods = append(out.Pods, string(p.UID))
	}
	slices.Sort(out.ReplicaSets)
	slices.Sort(out.Pods)
	return out
}

// keeps reports whether everything of before is still there: the same CRD, Deployment, Service
// and ReplicaSets, and every Pod (scaling up adds Pods, never replaces them).
func (u objectUIDs) keeps(before objectUIDs) bool {
	if u.CRD != before.CRD || u.Deployment != before.Deployment || u.Service != before.Service ||
		!slices.Equal(u.ReplicaSets, before.ReplicaSets) || len(before.Pods) == 0 {
		return false
	}
	for _, p := range before.Pods {
		if !slices.Contains(u.Pods, p) {
			return false
		}
	}
	return true
}

// takenOver are the resources of the instance and of what kro made for it in its namespace.
var takenOver = []string{"webservices", "deployments", "services", "replicasets", "pods"}

// noneRecreated fails the test if the spoke's audit log shows Flotilla deleting or creating,
// since the handover, the CRD, the instance or its children and their workload. A server-side
// apply that creates an object is recorded as a patch answered 201 Created.
func (s *takeoverSpoke) noneRecreated(t *testing.T, since time.Time) {
	t.Helper()
	events, err := s.plane.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if !strings.HasPrefix(ev.UserAgent, "flotilla") || ev.StageTimestamp.Before(since) {
			continue
		}
		created := ev.Verb == "create" || (ev.Verb == "patch" && ev.ResponseStatus.Code == 201)
		if !created && ev.Verb != "delete" && ev.Verb != "deletecollection" {
			continue
		}
		inNamespace := ev.ObjectRef.Namespace == cart.Namespace && slices.Contains(takenOver, ev.ObjectRef.Resource)
		if inNamespace || (ev.ObjectRef.Resource == "customresourcedefinitions" && ev.ObjectRef.Name == "webservices.kro.run") {
			t.Errorf("Flotilla %s %s (%d) after the handover", ev.Verb, ev.RequestURI, ev.ResponseStatus.Code)
		}
	}
}

// flotillaWrites summarises Flotilla's writes to the spoke since a time: verb, resource and
// subresource, with how many of each.
func (s *takeoverSpoke) flotillaWrites(t *testing.T, since time.Time) string {
	t.Helper()
	events, err := s.plane.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ev := range events {
		if ev.Mutating() && strings.HasPrefix(ev.UserAgent, "flotilla") && !ev.StageTimestamp.Before(since) {
			what := ev.Verb + " " + ev.ObjectRef.Resource
			if _, sub, ok := strings.Cut(ev.RequestURI, ev.ObjectRef.Name+"/"); ok && ev.ObjectRef.Name != "" {
				what += "/" + strings.Split(sub, "?")[0]
			}
			counts[what]++
		}
	}
	var out []string
	for _, what := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, fmt.Sprintf("%s ×%d", what, counts[what]))
	}
	return strings.Join(out, ", ")
}
