package inventory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// defaultKubeconfigKey is used when a Cluster's credentials reference names no key.
const defaultKubeconfigKey = "kubeconfig"

// credentials is a parsed kubeconfig and the hash that tells whether it changed.
type credentials struct {
	config *rest.Config
	hash   string
}

// observation is a verdict on a spoke: the Ready condition Flotilla would write.
type observation struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// loadCredentials reads the kubeconfig a Cluster references. A Secret or key that is missing,
// or a kubeconfig that does not parse, is returned as an observation to record on the Cluster
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
	cfg, err := restConfigFromKubeconfig(data)
	if err != nil {
		return nil, &observation{metav1.ConditionFalse, flotillav1.ReasonKubeconfigInvalid,
			fmt.Sprintf("key %q of Secret %s/%s is not a usable kubeconfig: %s", key, ref.Namespace, ref.Name, safeKubeconfigError(err))}, nil
	}
	sum := sha256.Sum256(data)
	return &credentials{config: cfg, hash: hex.EncodeToString(sum[:])}, nil, nil
}

// restConfigFromKubeconfig parses a kubeconfig and refuses ones that reference local files or
// run commands: credentials on the hub must be self-contained, and a Secret must never make the
// controller read its own files or execute programs.
func restConfigFromKubeconfig(data []byte) (*rest.Config, error) {
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, err
	}
	if raw.CurrentContext == "" && len(raw.Contexts) != 1 {
		return nil, fmt.Errorf("no current-context set and %d contexts to choose from", len(raw.Contexts))
	}
	for name, auth := range raw.AuthInfos {
		if auth.Exec != nil || auth.AuthProvider != nil {
			return nil, fmt.Errorf("user %q uses an exec or auth-provider plugin; use a token or client certificate", name)
		}
		if auth.TokenFile != "" || auth.ClientCertificate != "" || auth.ClientKey != "" {
			return nil, fmt.Errorf("user %q references files; inline the token or certificate data", name)
		}
	}
	for name, cl := range raw.Clusters {
		if cl.CertificateAuthority != "" {
			return nil, fmt.Errorf("cluster %q references a CA file; inline certificate-authority-data", name)
		}
	}
	cc := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{})
	if len(raw.Contexts) == 1 && raw.CurrentContext == "" {
		for name := range raw.Contexts {
			cc = clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil)
		}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("no server address")
	}
	return cfg, nil
}

// safeKubeconfigError keeps a parse error's message short; YAML errors quote at most a line
// number and a token kind, never the document.
func safeKubeconfigError(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// SpokeClient returns a client for a Cluster, built from the credentials it references on the
// hub, for commands that inspect spokes (`flotilla plan`, `flotilla diff`). It never runs
// commands or reads local files named in the kubeconfig.
func SpokeClient(ctx context.Context, hub client.Reader, name string, scheme *runtime.Scheme) (client.Client, error) {
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
	return client.New(cfg, client.Options{Scheme: scheme})
}
