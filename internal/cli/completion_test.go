package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
)

// complete runs `flotilla __complete args...` as the shell scripts do and returns the
// completions offered (the last line of cobra's answer is its directive).
func complete(t *testing.T, hf *hubFlags, args ...string) []string {
	t.Helper()
	root := newRootCommand(hf)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %v: %v (%s)", args, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != ":4" { // ShellCompDirectiveNoFileComp
		t.Errorf("__complete %v: directive %s, want :4 (no file names)", args, last)
	}
	return lines[:len(lines)-1]
}

func TestCompletionFromTheHub(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}},
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-2"}},
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "us-1"}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "worker"}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wiki"}},
		&flotillav1.ClusterPropagation{ObjectMeta: metav1.ObjectMeta{Name: "backups"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "eu"}},
	).Build()
	hf := &hubFlags{hub: hub}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "cordon", ""}, "eu-1 eu-2 us-1"},
		{[]string{"cluster", "drain", "eu"}, "eu-1 eu-2"},
		{[]string{"cluster", "drain", "eu-1", ""}, ""},
		{[]string{"unjoin", "u"}, "us-1"},
		{[]string{"get", "clusters", "eu-1", ""}, "eu-2 us-1"},
		{[]string{"plan", "-n", "shop", ""}, "web worker clusterpropagation/backups"},
		{[]string{"rollout", "approve", "-n", "shop", ""}, "web worker clusterpropagation/backups"},
		{[]string{"diff", "w"}, "wiki"},
		{[]string{"diff", "--namespace=shop", "propagation/wo"}, "propagation/worker"},
		{[]string{"plan", "clusterpropagation/"}, "clusterpropagation/backups"},
		{[]string{"status", "-n", "shop", ""}, "web worker clusterpropagation/backups placement/eu"},
		{[]string{"status", "-n", "shop", "placement/"}, "placement/eu"},
	} {
		if got := strings.Join(complete(t, hf, tc.args...), " "); got != tc.want {
			t.Errorf("flotilla %s<TAB> = %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestCompletionWithoutAHub completes nothing, quickly, when the hub cannot be read: no
// kubeconfig, or a hub that refuses connections.
func TestCompletionWithoutAHub(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "hub.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: hub, context: {cluster: hub, user: u}}]
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	for _, args := range [][]string{
		{"cluster", "cordon", ""},
		{"--hub-kubeconfig", kubeconfig, "cluster", "cordon", ""},
		{"plan", "--hub-kubeconfig", kubeconfig, ""},
	} {
		start := time.Now()
		if got := complete(t, &hubFlags{}, args...); len(got) != 0 {
			t.Errorf("flotilla %v<TAB> = %q, want nothing", args, got)
		}
		if took := time.Since(start); took > completionTimeout+time.Second {
			t.Errorf("flotilla %v<TAB> took %s", args, took)
		}
	}
}

// TestCompletionOfFlagsAndTransparentOwners: -n completes the hub's namespaces, --context the
// kubeconfig's contexts (the spoke's kubeconfig in join), and plan deploy/<TAB> the Deployments
// of the namespace labelled for transparent mode.
func TestCompletionOfFlagsAndTransparentOwners(t *testing.T) {
	labelled := map[string]string{flotillav1.LabelPlacement: "eu"}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shipping"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", Labels: labelled}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout", Labels: labelled}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cache"}}, // not labelled
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Labels: labelled}},
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	).Build()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: hub, context: {cluster: c, user: u}}, {name: spoke-1, context: {cluster: c, user: u}}, {name: spoke-2, context: {cluster: c, user: u}}]
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	hf := &hubFlags{hub: hub}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-n", "sh"}, "shipping shop"},
		{[]string{"status", "--namespace", ""}, "default shipping shop"},
		{[]string{"get", "clusters", "-n", ""}, ""}, // Clusters have no namespace
		{[]string{"plan", "-n", "shop", "deploy/"}, "deploy/cart deploy/checkout"},
		{[]string{"rollout", "status", "-n", "shop", "deploy/"}, "deploy/cart deploy/checkout"},
		{[]string{"diff", "-n", "shop", "deployment/ch"}, "deployment/checkout"},
		{[]string{"plan", "-n", "shop", "sts/"}, "sts/db"},
		{[]string{"plan", "-n", "shop", "w"}, "web"},
		{[]string{"--kubeconfig", kubeconfig, "get", "clusters", "--context", ""}, "hub spoke-1 spoke-2"},
		{[]string{"status", "--kubeconfig", kubeconfig, "--hub-context", "h"}, "hub"},
		{[]string{"join", "spoke-1", "--kubeconfig", kubeconfig, "--context", "spoke"}, "spoke-1 spoke-2"},
	} {
		if got := strings.Join(complete(t, hf, tc.args...), " "); got != tc.want {
			t.Errorf("flotilla %s<TAB> = %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}
