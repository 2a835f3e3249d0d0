package localfleet_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// TestResetReturnsAPlaneToWhereItWasMarkedClean changes a full spoke in every way a test does
// (a namespace with a Deployment and its Pods, a CRD and one of its objects, a label on a
// namespace it started with, a ClusterRole it started with deleted), resets it, and checks that
// it is as it was marked: what was added is gone from the API, what was changed or deleted is
// back, its audit log starts afresh, and the same Deployment created again becomes Available
// (the spoke's controllers and kwok follow the reset). A paused plane's processes are stopped
// until it is resumed; a plane stopped since it was marked is started again and reset.
func TestResetReturnsAPlaneToWhereItWasMarkedClean(t *testing.T) {
	s := fleettest.FullSpoke("spoke-a", nil)
	s.AuditLog = true
	fleet := fleettest.Start(t, s)
	spoke := fleet.Plane("spoke-a")
	ctx := context.Background()
	if err := fleet.MarkClean(ctx); err != nil {
		t.Fatal(err)
	}
	cs := clientFor(t, spoke)
	dyn, err := dynamic.NewForConfig(spoke.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

	runWorkload := func() {
		t.Helper()
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AppsV1().Deployments("shop").Create(ctx, testDeployment("web", 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 90*time.Second, "Deployment shop/web available", func() error {
			d, err := cs.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Status.AvailableReplicas != 2 {
				return fmt.Errorf("%d of 2 replicas available", d.Status.AvailableReplicas)
			}
			return nil
		})
	}
	runWorkload()
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(widgetCRD)); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fleettest.Eventually(t, 30*time.Second, "a Widget created", func() error {
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}
		_, err := dyn.Resource(widgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{})
		return err
	})
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, "default", types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.RbacV1().ClusterRoles().Delete(ctx, "view", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	resetAt := time.Now()
	if err := fleet.Reset(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := cs.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace shop after the reset: %v, want NotFound", err)
	}
	if l, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("Deployments after the reset: %v (%v), want none", l, err)
	}
	if l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("Pods after the reset: %d (%v), want none", len(l.Items), err)
	}
	if l, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("CRDs after the reset: %d (%v), want none", len(l.Items), err)
	}
	fleettest.Eventually(t, 30*time.Second, "example.com/v1 no longer served", func() error {
		if _, err := cs.Discovery().ServerResourcesForGroupVersion("example.com/v1"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("discovery of example.com/v1: %v", err)
		}
		return nil
	})
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil || ns.Labels["touched"] != "" {
		t.Errorf("namespace default after the reset: labels %v (%v), want its labels as marked", ns.Labels, err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRole view after the reset: %v, want it back", err)
	}
	assertAuditLogFrom(t, spoke, resetAt)

	runWorkload()

	// Paused, every process of the plane is stopped where it is; resumed, the plane resets.
	if err := fleet.Pause(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range spoke.PIDs() {
		fleettest.Eventually(t, 10*time.Second, name+" stopped", func() error {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				return err
			}
			if state := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))[0]; state != "T" {
				return fmt.Errorf("pid %d is in state %s, want T (stopped)", pid, state)
			}
			return nil
		})
	}
	if err := fleet.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace shop after a pause and a reset: %v, want NotFound", err)
	}

	// Stopped since it was marked (a test that took the spoke away), the plane is started
	// again on its own data and reset; its audit log still starts afresh.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spoke.Stop()
	stoppedAt := time.Now()
	if err := fleet.Reset(ctx); err != nil {
		t.Fatalf("reset of a plane stopped since it was marked clean: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace shop after a stop and a reset: %v, want NotFound", err)
	}
	assertAuditLogFrom(t, spoke, stoppedAt)
}

// assertAuditLogFrom checks that the plane's audit log, read after a reset, starts afresh: it
// holds no request received before the reset began.
func assertAuditLogFrom(t *testing.T, p *localfleet.Plane, resetAt time.Time) {
	t.Helper()
	events, err := p.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.RequestReceivedTimestamp.Before(resetAt) {
			t.Errorf("audit log after the reset holds a request from before it: %s %s at %s", e.Verb, e.RequestURI, e.RequestReceivedTimestamp)
		}
	}
}
