package localfleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

func clientFor(t *testing.T, p *localfleet.Plane) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(p.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestHubAndSpokeLifecycle covers, on one hub and one API-only spoke: data surviving a stop and
// start, an API server restarted alone, and the hub's restricted controllers.
func TestHubAndSpokeLifecycle(t *testing.T) {
	fleet := fleettest.Start(t, fleettest.Hub(), fleettest.APIOnlySpoke("spoke-a"))
	ctx := context.Background()
	spoke := fleet.Plane("spoke-a")
	cs := clientFor(t, spoke)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep-me", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("stop makes the spoke unreachable and start brings its data back", func(t *testing.T) {
		pids := spoke.PIDs()
		if len(pids) != 2 {
			t.Fatalf("API-only spoke runs %v, want etcd and kube-apiserver", pids)
		}
		spoke.Stop()
		for name, pid := range pids {
			if localfleet.ProcessAlive(pid) {
				t.Errorf("%s (pid %d) still running after Stop", name, pid)
			}
		}
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "keep-me", metav1.GetOptions{}); err == nil {
			t.Fatal("a stopped spoke answered a request")
		}
		if err := spoke.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "keep-me", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap lost across stop and start: %v", err)
		}
		if got.Data["k"] != "v" {
			t.Fatalf("ConfigMap data = %v", got.Data)
		}
	})

	t.Run("the API server restarts alone", func(t *testing.T) {
		before := spoke.PIDs()
		if err := spoke.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		after := spoke.PIDs()
		if after["etcd"] != before["etcd"] {
			t.Errorf("etcd pid changed from %d to %d", before["etcd"], after["etcd"])
		}
		if after["kube-apiserver"] == before["kube-apiserver"] || localfleet.ProcessAlive(before["kube-apiserver"]) {
			t.Errorf("kube-apiserver was not restarted (pids %d → %d)", before["kube-apiserver"], after["kube-apiserver"])
		}
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "keep-me", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the hub deletes namespaces but runs no workload controllers", func(t *testing.T) {
		hub := clientFor(t, fleet.Hub())
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "scratch"}}
		if _, err := hub.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deploy := testDeployment("web", 2)
		if _, err := hub.AppsV1().Deployments("scratch").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// An owned object must be garbage-collected with its owner.
		owner, err := hub.CoreV1().ConfigMaps("scratch").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}}}}
		if _, err := hub.CoreV1().ConfigMaps("scratch").Create(ctx, owned, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := hub.CoreV1().ConfigMaps("scratch").Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 60*time.Second, "owned ConfigMap garbage-collected", func() error {
			_, err := hub.CoreV1().ConfigMaps("scratch").Get(ctx, "owned", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("owned ConfigMap still present (get: %v)", err)
		})
		rs, err := hub.AppsV1().ReplicaSets("scratch").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.Items) != 0 {
			t.Fatalf("a controller on the hub created %d ReplicaSets for a hub Deployment", len(rs.Items))
		}
		if err := hub.CoreV1().Namespaces().Delete(ctx, "scratch", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		fleettest.Eventually(t, 60*time.Second, "namespace deleted", func() error {
			_, err := hub.CoreV1().Namespaces().Get(ctx, "scratch", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("namespace still present (get: %v)", err)
		})
	})
}

// TestFailedStartStopsEverything starts two planes, one of which cannot start, and checks that
// the error shows the failing component's log and that no process of either plane survives.
func TestFailedStartStopsEverything(t *testing.T) {
	dir := t.TempDir()
	good := fleettest.APIOnlySpoke("good")
	bad := fleettest.APIOnlySpoke("bad")
	bad.ExtraAPIServerArgs = []string{"--no-such-flag=1"}
	_, err := localfleet.Start(context.Background(), localfleet.Options{Dir: dir, Planes: []localfleet.PlaneSpec{good, bad}})
	if err == nil {
		t.Fatal("a plane with a bad flag started")
	}
	for _, want := range []string{"plane bad", "kube-apiserver exited", "no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	pidFiles, _ := filepath.Glob(filepath.Join(dir, "*", "*.pid"))
	if len(pidFiles) < 3 {
		t.Fatalf("expected pid files of both planes, found %v", pidFiles)
	}
	for _, f := range pidFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if localfleet.ProcessAlive(pid) {
			t.Errorf("%s: pid %d still running after a failed start", f, pid)
		}
	}
}

func testDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}
