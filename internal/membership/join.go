package membership

import (
	"context"
	"fmt"
	"maps"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
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
)

// JoinOptions describes a spoke to join.
type JoinOptions struct {
	// Name of the Cluster on the hub.
	Name string
	// Spoke is an admin connection to the spoke, used once to set Flotilla up there.
	Spoke *rest.Config
	// Labels go on the Cluster; placements select them.
	Labels map[string]string
	// Progress receives one line per step; nil discards.
	Progress func(string)
}

// Join sets the spoke up for Flotilla and registers it on the hub. A name that is not a
// DNS-1123 label is refused before the spoke or the hub is touched (see ValidateName).
func Join(ctx context.Context, hub client.Client, opts JoinOptions) error {
	if err := ValidateName(opts.Name); err != nil {
		return err
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	spoke, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return err
	}
	id, err := clusterID(ctx, spoke)
	if err != nil {
		return fmt.Errorf("identify spoke %s: %w", opts.Spoke.Host, err)
	}
	if err := refuseSecondName(ctx, hub, opts.Name, id); err != nil {
		return err
	}
	if err := setUpSpoke(ctx, spoke); err != nil {
		return fmt.Errorf("set up Flotilla's ServiceAccount on the spoke: %w", err)
	}
	progress(fmt.Sprintf("spoke: namespace %s, serviceaccount %s and clusterrolebinding %s ready", Namespace, ServiceAccount, ClusterRoleBinding))
	token, err := issueToken(ctx, spoke)
	if err != nil {
		return fmt.Errorf("issue a token for Flotilla on the spoke: %w", err)
	}
	kubeconfig, err := tokenKubeconfig(opts.Spoke, opts.Name, token)
	if err != nil {
		return err
	}
	if err := applyCredentials(ctx, hub, opts.Name, kubeconfig); err != nil {
		return err
	}
	progress(fmt.Sprintf("hub: secret %s/%s holds the spoke kubeconfig (ServiceAccount token)", Namespace, SecretName(opts.Name)))
	if err := applyCluster(ctx, hub, opts.Name, id, opts.Labels); err != nil {
		return err
	}
	progress(fmt.Sprintf("hub: cluster.flotilla.dev/%s joined", opts.Name))
	return nil
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

func setUpSpoke(ctx context.Context, spoke kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccount, Namespace: Namespace}}
	if _, err := spoke.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: Namespace}},
	}
	if _, err := spoke.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: selfRemoval, Namespace: Namespace},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"serviceaccounts"},
			ResourceNames: []string{ServiceAccount}, Verbs: []string{"delete"},
		}},
	}
	if _, err := spoke.RbacV1().Roles(Namespace).Create(ctx, role, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: selfRemoval, Namespace: Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: selfRemoval},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: Namespace}},
	}
	if _, err := spoke.RbacV1().RoleBindings(Namespace).Create(ctx, rb, metav1.CreateOptions{FieldManager: fieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func issueToken(ctx context.Context, spoke kubernetes.Interface) (string, error) {
	lifetime := int64(tokenLifetime)
	tr, err := spoke.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &lifetime},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
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
	if err := hub.Patch(ctx, secret, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil { //nolint:staticcheck // no typed apply configuration in use here
		return fmt.Errorf("store credentials in secret %s/%s on the hub: %w", Namespace, secret.Name, err)
	}
	return nil
}

func applyCluster(ctx context.Context, hub client.Client, name, id string, labels map[string]string) error {
	all := map[string]string{}
	maps.Copy(all, labels)
	all[flotillav1.LabelClusterID] = id
	c := &flotillav1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: flotillav1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Spec: flotillav1.ClusterSpec{Credentials: flotillav1.KubeconfigSecretRef{
			Namespace: Namespace, Name: SecretName(name), Key: kubeconfigKey}},
	}
	if err := hub.Patch(ctx, c, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil { //nolint:staticcheck // no typed apply configuration in use here
		return fmt.Errorf("apply cluster %s on the hub: %w", name, err)
	}
	return nil
}
