package membership

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Where a pull-mode agent's hub credential may be kept on its spoke, when `flotilla join --mode
// pull` is given the spoke's credentials: the agent reads it there (flotilla agent
// --hub-kubeconfig-secret) and writes the renewed one back. The hub never reads it.
const (
	// AgentCredentialSecret is the Secret, in Namespace on the spoke, that holds the agent's hub
	// kubeconfig.
	AgentCredentialSecret = "flotilla-agent-hub"
	// AgentCredentialKey is its key.
	AgentCredentialKey = "kubeconfig"
)

// StoreAgentCredential writes cluster's agent credential (AgentCredential.Kubeconfig) into
// AgentCredentialSecret on the spoke, with the operator's own connection to it (used for this
// alone, and never stored). The Secret carries this hub's ID (LabelHub); one of that name
// without it is refused, not taken over.
func StoreAgentCredential(ctx context.Context, hub client.Client, spoke *rest.Config, cluster string, kubeconfig []byte) error {
	hubID, err := hubIdentity(ctx, hub)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(spoke)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: spokeFieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s on the spoke: %w", Namespace, err)
	}
	secrets := cs.CoreV1().Secrets(Namespace)
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: AgentCredentialSecret, Namespace: Namespace,
			Labels: map[string]string{LabelHub: hubID, flotillav1.LabelCluster: cluster},
			Annotations: map[string]string{"flotilla.dev/purpose": "The hub credential of cluster " + cluster + "'s pull-mode agent " +
				"(flotilla agent --hub-kubeconfig-secret), which renews it here. `flotilla unjoin` on the hub revokes it."}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{AgentCredentialKey: kubeconfig},
	}
	existing, err := secrets.Get(ctx, AgentCredentialSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := secrets.Create(ctx, want, metav1.CreateOptions{FieldManager: spokeFieldManager}); err != nil {
			return fmt.Errorf("create secret %s/%s on the spoke: %w", Namespace, AgentCredentialSecret, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read secret %s/%s on the spoke: %w", Namespace, AgentCredentialSecret, err)
	case existing.Labels[LabelHub] != hubID:
		return &NotOursError{Kind: "secret", Name: Namespace + "/" + AgentCredentialSecret}
	}
	existing.Labels, existing.Data = want.Labels, want.Data
	if _, err := secrets.Update(ctx, existing, metav1.UpdateOptions{FieldManager: spokeFieldManager}); err != nil {
		return fmt.Errorf("update secret %s/%s on the spoke: %w", Namespace, AgentCredentialSecret, err)
	}
	return nil
}
