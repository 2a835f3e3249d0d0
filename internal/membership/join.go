package membership

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/serverside"
)

// JoinOptions describes a spoke to join.
type JoinOptions struct {
	// Name of the Cluster on the hub.
	Name string
	// Spoke is an admin connection to the spoke, used once to set Flotilla up there.
	Spoke *rest.Config
	// Labels go on the Cluster; placements select them.
	Labels map[string]string
	// Role names an existing ClusterRole on the spoke to bind Flotilla's ServiceAccount to,
	// instead of DeliveryClusterRole, which join creates (""). Deliveries the role does not
	// allow fail with "forbidden by the spoke's grant".
	Role string
	// APIGroups are granted whole (every resource of the group) with DeliveryClusterRole,
	// though the spoke may not serve them yet: the groups of CustomResourceDefinitions the hub
	// will deliver there. nil means DefaultAPIGroups; groups the spoke serves at join are
	// granted anyway (see deliveryRules). Ignored with Role.
	APIGroups []string
	// TokenLifetime is how long each token is valid (0: DefaultTokenLifetime; see
	// ValidateTokenLifetime). The hub renews it when a third is left.
	TokenLifetime time.Duration
	// Progress receives one line per step; nil discards.
	Progress func(string)
}

// Join sets the spoke up for Flotilla and registers it on the hub. A name that is not a
// DNS-1123 label, a bad role name or lifetime is refused before the spoke or the hub is
// touched; so is a spoke where an object of join's names exists that join did not create
// from this hub (a *NotOursError), and a name joined in mode Pull (a *ModeChangeError).
//
// Joining again issues a new token bound to a new Secret, stores it on the hub, and then
// deletes the Secrets earlier tokens were bound to, which revokes them.
func Join(ctx context.Context, hub client.Client, opts JoinOptions) error {
	if err := ValidateName(opts.Name); err != nil {
		return err
	}
	if err := ValidateRole(opts.Role); err != nil {
		return err
	}
	if err := ValidateTokenLifetime(opts.TokenLifetime); err != nil {
		return err
	}
	if err := ValidateAPIGroups(opts.APIGroups); err != nil {
		return err
	}
	role, lifetime := opts.Role, opts.TokenLifetime
	if role == "" {
		role = DeliveryClusterRole
	}
	if lifetime == 0 {
		lifetime = DefaultTokenLifetime
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if err := refuseModeChange(ctx, hub, opts.Name, flotillav1.ClusterPush); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return err
	}
	id, err := clusterID(ctx, cs)
	if err != nil {
		return fmt.Errorf("identify spoke %s: %w", opts.Spoke.Host, err)
	}
	if err := refuseSecondName(ctx, hub, opts.Name, id); err != nil {
		return err
	}
	hubID, err := hubIdentity(ctx, hub)
	if err != nil {
		return err
	}
	s := spoke{cs: cs, hubID: hubID}
	if err := s.preflight(ctx, role); err != nil {
		return err
	}
	var rules []rbacv1.PolicyRule
	if role == DeliveryClusterRole {
		if rules, err = s.deliveryRules(opts.APIGroups); err != nil {
			return err
		}
	}
	sa, err := s.setUp(ctx, role, rules)
	if err != nil {
		return fmt.Errorf("set up Flotilla's ServiceAccount on the spoke: %w", err)
	}
	progress(fmt.Sprintf("spoke: serviceaccount %s/%s bound to clusterrole %s (clusterrolebinding %s)", Namespace, ServiceAccount, role, ClusterRoleBinding))
	tok, err := s.issueToken(ctx, sa, lifetime)
	if err != nil {
		return fmt.Errorf("issue a token for Flotilla on the spoke: %w", err)
	}
	stored := false
	defer func() {
		if !stored {
			// The hub never got the new token: revoke it rather than leave it valid.
			_ = cs.CoreV1().Secrets(Namespace).Delete(context.WithoutCancel(ctx), tok.secret, metav1.DeleteOptions{})
		}
	}()
	kubeconfig, err := tokenKubeconfig(opts.Spoke, opts.Name, tok.token)
	if err != nil {
		return err
	}
	if err := applyCredentials(ctx, hub, opts.Name, kubeconfig); err != nil {
		return err
	}
	stored = true
	progress(fmt.Sprintf("hub: secret %s/%s holds the spoke kubeconfig (a token valid until %s, bound to secret %s/%s on the spoke; the hub renews it)",
		Namespace, SecretName(opts.Name), tok.expires.UTC().Format(time.RFC3339), Namespace, tok.secret))
	if err := applyCluster(ctx, hub, opts.Name, id, role, opts.Labels); err != nil {
		return err
	}
	progress(fmt.Sprintf("hub: cluster.flotilla.dev/%s joined", opts.Name))
	revoked, err := s.revokeTokens(ctx, tok.secret)
	if err != nil {
		return fmt.Errorf("cluster %s joined with a new token, but earlier tokens may still be valid: %w", opts.Name, err)
	}
	if len(revoked) > 0 {
		progress(fmt.Sprintf("spoke: earlier tokens revoked (deleted secrets %s in %s)", strings.Join(revoked, ", "), Namespace))
	}
	return nil
}

// hubIdentity identifies the hub by the UID of its kube-system namespace; join labels what it
// creates on spokes with it (LabelHub).
func hubIdentity(ctx context.Context, hub client.Client) (string, error) {
	ns := &corev1.Namespace{}
	if err := hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", fmt.Errorf("identify the hub (read namespace %s there): %w", metav1.NamespaceSystem, err)
	}
	return string(ns.UID), nil
}

// clusterID identifies a spoke API server by the UID of its kube-system namespace.
func clusterID(ctx context.Context, spoke kubernetes.Interface) (string, error) {
	ns, err := spoke.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(ns.UID), nil
}

func refuseSecondName(ctx context.Context, hub client.Client, name, id string) error {
	var clusters flotillav1.ClusterList
	if err := hub.List(ctx, &clusters, client.MatchingLabels{flotillav1.LabelClusterID: id}); err != nil {
		return fmt.Errorf("list clusters on the hub: %w", err)
	}
	for _, c := range clusters.Items {
		if c.Name != name {
			return fmt.Errorf("this API server is already joined as cluster %q; run `flotilla unjoin %s` first, or join it again under that name", c.Name, c.Name)
		}
	}
	return nil
}

// tokenKubeconfig builds a self-contained kubeconfig for the spoke with Flotilla's token and the
// server address and CA of the user's connection.
func tokenKubeconfig(spoke *rest.Config, name, token string) ([]byte, error) {
	ca := spoke.CAData
	if len(ca) == 0 && spoke.CAFile != "" {
		data, err := os.ReadFile(spoke.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the spoke's CA file: %w", err)
		}
		ca = data
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   spoke.Host,
		CertificateAuthorityData: ca,
		InsecureSkipTLSVerify:    spoke.Insecure,
		TLSServerName:            spoke.ServerName,
	}
	cfg.AuthInfos["flotilla"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "flotilla"}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

func applyCredentials(ctx context.Context, hub client.Client, name string, kubeconfig []byte) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s on the hub: %w", Namespace, err)
	}
	secret := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      SecretName(name),
			Namespace: Namespace,
			Labels:    map[string]string{flotillav1.LabelCluster: name},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{kubeconfigKey: kubeconfig},
	}
	if err := serverside.Apply(ctx, hub, secret, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("store credentials in secret %s/%s on the hub: %w", Namespace, secret.Name, err)
	}
	return nil
}

func applyCluster(ctx context.Context, hub client.Client, name, id, role string, labels map[string]string) error {
	all := map[string]string{}
	maps.Copy(all, labels)
	all[flotillav1.LabelClusterID] = id
	c := &flotillav1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: flotillav1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all, Annotations: map[string]string{flotillav1.AnnotationSpokeGrant: role}},
		Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{
			Namespace: Namespace, Name: SecretName(name), Key: kubeconfigKey}},
	}
	if err := serverside.Apply(ctx, hub, c, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply cluster %s on the hub: %w", name, err)
	}
	return nil
}
