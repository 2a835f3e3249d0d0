package agent

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestSecretStore: the agent reads its hub kubeconfig from the spoke Secret and writes the
// renewed one back, unless the Secret changed since it read it (joined again).
func TestSecretStore(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace, Name: membership.AgentCredentialSecret, ResourceVersion: "1"},
		Data:       map[string][]byte{membership.AgentCredentialKey: []byte("first")},
	})
	if _, err := newSecretStore(cs, "no-slash"); err == nil {
		t.Fatal("a Secret reference without a namespace was taken")
	}
	s, err := newSecretStore(cs, membership.Namespace+"/"+membership.AgentCredentialSecret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.load(ctx)
	if err != nil || string(got) != "first" {
		t.Fatalf("load = %q, %v", got, err)
	}
	if err := s.save(ctx, []byte("renewed")); err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets(membership.Namespace).Get(ctx, membership.AgentCredentialSecret, metav1.GetOptions{})
	if err != nil || string(sec.Data[membership.AgentCredentialKey]) != "renewed" {
		t.Fatalf("the Secret after save: %v", err)
	}
	// Someone writes the Secret (a join again): the agent's next save does not overwrite it.
	sec.Data[membership.AgentCredentialKey] = []byte("re-joined")
	sec.ResourceVersion = "99"
	if _, err := cs.CoreV1().Secrets(membership.Namespace).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.save(ctx, []byte("renewed again")); err == nil || !strings.Contains(err.Error(), "changed since the agent read it") {
		t.Fatalf("save over a changed Secret: %v", err)
	}
	sec, _ = cs.CoreV1().Secrets(membership.Namespace).Get(ctx, membership.AgentCredentialSecret, metav1.GetOptions{})
	if string(sec.Data[membership.AgentCredentialKey]) != "re-joined" {
		t.Fatal("the agent overwrote a credential written after it read the Secret")
	}
}
