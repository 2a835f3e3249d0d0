package membership

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// TestAgentIdentity: GrantAgent creates the agent's ServiceAccount once (again is a no-op),
// refuses one it did not create, and RevokeAgent deletes only its own.
func TestAgentIdentity(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	someoneElses := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: AgentServiceAccount("b"), Namespace: Namespace}}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(someoneElses).Build()

	if got, want := AgentUser("a"), "system:serviceaccount:flotilla-system:agent-a"; got != want {
		t.Errorf("AgentUser = %q, want %q", got, want)
	}
	for range 2 {
		sa, err := GrantAgent(ctx, hub, "a")
		if err != nil {
			t.Fatal(err)
		}
		if sa.Name != "agent-a" || sa.Labels[flotillav1.LabelCluster] != "a" {
			t.Fatalf("agent identity %s/%s labels %v", sa.Namespace, sa.Name, sa.Labels)
		}
	}
	if _, err := GrantAgent(ctx, hub, "b"); err == nil {
		t.Error("GrantAgent took over a ServiceAccount it did not create")
	}
	if _, err := GrantAgent(ctx, hub, "Not_A_Label"); err == nil {
		t.Error("GrantAgent accepted a cluster name that is not a DNS label")
	}

	if revoked, err := RevokeAgent(ctx, hub, "b"); err != nil || revoked {
		t.Errorf("RevokeAgent of someone else's account: revoked %v, %v", revoked, err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(someoneElses), &corev1.ServiceAccount{}); err != nil {
		t.Errorf("someone else's account: %v", err)
	}
	if revoked, err := RevokeAgent(ctx, hub, "a"); err != nil || !revoked {
		t.Fatalf("RevokeAgent: revoked %v, %v", revoked, err)
	}
	err := hub.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "agent-a"}, &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("agent-a after RevokeAgent: %v", err)
	}
	if revoked, err := RevokeAgent(ctx, hub, "a"); err != nil || revoked {
		t.Errorf("RevokeAgent again: revoked %v, %v", revoked, err)
	}
}
