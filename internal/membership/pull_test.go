package membership

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func pullTestHub(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := flotillav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// TestJoinRefusesAModeChange: a push cluster is not joined in pull mode, nor a pull cluster in
// push mode, nor an imported one in pull mode; each refusal comes before anything is written
// (the spoke, nil here, is never reached).
func TestJoinRefusesAModeChange(t *testing.T) {
	ctx := context.Background()
	push := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "core"}}
	pull := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull}}
	imported := &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "capi", Labels: map[string]string{flotillav1.LabelSource: "cluster-api"}}}
	hub := pullTestHub(t, push, pull, imported)

	var change *ModeChangeError
	if _, err := JoinPull(ctx, hub, &rest.Config{Host: "https://hub"}, PullJoinOptions{Name: "core"}); !errors.As(err, &change) ||
		!strings.Contains(err.Error(), "flotilla unjoin core") || !strings.Contains(err.Error(), "--mode pull") {
		t.Errorf("pull join of a push cluster: %v", err)
	}
	if err := Join(ctx, hub, JoinOptions{Name: "edge"}); !errors.As(err, &change) || !strings.Contains(err.Error(), "--mode push") {
		t.Errorf("push join of a pull cluster: %v", err)
	}
	var imp *ImportedError
	if _, err := JoinPull(ctx, hub, &rest.Config{Host: "https://hub"}, PullJoinOptions{Name: "capi"}); !errors.As(err, &imp) {
		t.Errorf("pull join of an imported cluster: %v", err)
	}
	var sas corev1.ServiceAccountList
	if err := hub.List(ctx, &sas); err != nil || len(sas.Items) != 0 {
		t.Errorf("a refused join created agent identities: %d (%v)", len(sas.Items), err)
	}
}

// TestJoinPullRefusesAForeignRole: a Role of the agent's name that JoinPull did not make is not
// taken over.
func TestJoinPullRefusesAForeignRole(t *testing.T) {
	foreign := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "agent-edge", Namespace: Namespace}}
	hub := pullTestHub(t, foreign)
	_, err := JoinPull(context.Background(), hub, &rest.Config{Host: "https://hub"}, PullJoinOptions{Name: "edge"})
	if err == nil || !strings.Contains(err.Error(), "not taken over") {
		t.Fatalf("JoinPull over someone else's Role: %v", err)
	}
}

// TestUnjoinPull: unjoining a pull cluster needs no spoke; it deletes the Cluster, the agent's
// ServiceAccount, Role and RoleBinding, and leaves a same-named object it did not make.
func TestUnjoinPull(t *testing.T) {
	ctx := context.Background()
	labels := agentLabels("edge")
	hub := pullTestHub(t,
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent-edge", Namespace: Namespace, Labels: labels}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "agent-edge", Namespace: Namespace, Labels: labels}},
		// Someone else's binding of the same name (no labels), and a labelled Role of another name.
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "agent-edge", Namespace: Namespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: Namespace, Labels: labels}},
	)
	var lines []string
	if err := Unjoin(ctx, hub, UnjoinOptions{Name: "edge", Progress: func(l string) { lines = append(lines, l) }}); err != nil {
		t.Fatal(err)
	}
	gone := func(obj client.Object, name string) bool {
		return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, obj))
	}
	if !gone(&flotillav1.Cluster{}, "edge") || !gone(&corev1.ServiceAccount{}, "agent-edge") || !gone(&rbacv1.Role{}, "agent-edge") {
		t.Error("the Cluster, the agent's ServiceAccount or its Role is left")
	}
	if gone(&rbacv1.RoleBinding{}, "agent-edge") || gone(&rbacv1.Role{}, "other") {
		t.Error("unjoin deleted an object it did not make")
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{"serviceaccount flotilla-system/agent-edge deleted", "role flotilla-system/agent-edge deleted", "spoke: not reached"} {
		if !strings.Contains(out, want) {
			t.Errorf("unjoin did not say %q:\n%s", want, out)
		}
	}
}
