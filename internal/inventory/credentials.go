package inventory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
)

// defaultKubeconfigKey is used when a Cluster's credentials reference names no key.
const defaultKubeconfigKey = "kubeconfig"

// credentials is a parsed kubeconfig and the hash that tells whether it changed.
type credentials struct {
	config *rest.Config
	hash   string
	// token holds the claims of the kubeconfig's token; nil when it has no token with an expiry.
	token *tokenClaims
	// secret and key locate the kubeconfig on the hub, where a renewed token is written.
	secret client.ObjectKey
	key    string
	// notRenewable says why the hub may not renew the token; "" when it may.
	notRenewable string
}

// observation is a verdict on a spoke: the Ready condition Flotilla would write.
type observation struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// loadCredentials reads the kubeconfig a Cluster references. A Secret or key that is missing,
// or a kubeconfig that does not parse or is refused (it names a plugin or a local file; see
// package kubeconfig), is returned as an observation to record on the Cluster
// (the user must fix it); other errors (the hub is unreachable) are returned as errors to retry.
func loadCredentials(ctx context.Context, reader client.Reader, c *flotillav1.Cluster) (*credentials, *observation, error) {
	ref := c.Spec.Credentials
	key := ref.Key
	if key == "" {
		key = defaultKubeconfigKey
	}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret)
	if apierrors.IsNotFound(err) {
		return nil, &observation{metav1.ConditionFalse, flotillav1.ReasonSecretNotFound,
			fmt.Sprintf("Secret %s/%s named in spec.credentials does not exist; create it or run `flotilla join %s`", ref.Namespace, ref.Name, c.Name)}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read credentials Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	data, ok := secret.Data[key]
	if !ok || len(data) == 0 {
		return nil, &observation{metav1.ConditionFalse, flotillav1.ReasonKubeconfigKeyMissing,
			fmt.Sprintf("Secret %s/%s has no key %q; put the kubeconfig there or set spec.credentials.key", ref.Namespace, ref.Name, key)}, nil
	}
	cfg, err := kubeconfig.Parse(data)
	if err != nil {
		return nil, &observation{metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid,
			fmt.Sprintf("key %q of Secret %s/%s is not a usable kubeconfig: %s", key, ref.Namespace, ref.Name, safeKubeconfigError(err))}, nil
	}
	sum := sha256.Sum256(data)
	creds := &credentials{config: cfg, hash: hex.EncodeToString(sum[:]), token: parseToken(cfg.BearerToken),
		secret: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, key: key}
	creds.notRenewable = whyNotRenewable(secret, c.Name, creds.token)
	return creds, nil, nil
}

// whyNotRenewable says why the hub may not renew a token: it writes only Secrets that
// `flotilla join` wrote for this Cluster, and renews only ServiceAccount tokens bound to a
// Secret on the spoke (whose deletion revokes them).
func whyNotRenewable(secret *corev1.Secret, cluster string, token *tokenClaims) string {
	switch {
	case secret.Labels[flotillav1.LabelCluster] != cluster:
		return fmt.Sprintf("Secret %s/%s was not written by `flotilla join` (it lacks the label %s=%s)", secret.Namespace, secret.Name, flotillav1.LabelCluster, cluster)
	case token == nil:
		return "the kubeconfig holds no token with an expiry"
	case token.Kubernetes.Namespace == "" || token.Kubernetes.ServiceAccount.Name == "":
		return "the token is not a ServiceAccount token"
	case token.Kubernetes.Secret == nil:
		return "the token is not bound to a Secret on the spoke"
	}
	return ""
}

// safeKubeconfigError keeps a kubeconfig error's message short; kubeconfig.Parse never quotes
// the document.
func safeKubeconfigError(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// SpokeConfig returns how to reach a Cluster, built from the credentials it references on the
// hub, for commands that inspect spokes (`flotilla plan`, `flotilla diff`). It never runs
// commands or reads local files named in the kubeconfig.
func SpokeConfig(ctx context.Context, hub client.Reader, name string) (*rest.Config, error) {
	c := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	creds, obs, err := loadCredentials(ctx, hub, c)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w (reading spoke credentials needs get on Secrets in %s)", err, c.Spec.Credentials.Namespace)
	case obs != nil:
		return nil, fmt.Errorf("cluster %s: %s", name, obs.message)
	}
	cfg := rest.CopyConfig(creds.config)
	cfg.UserAgent = "flotilla-cli"
	return cfg, nil
}
