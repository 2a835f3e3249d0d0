package membership

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
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

// A pull-mode cluster is joined on the hub alone: the hub never connects to its spoke. JoinPull
// creates the Cluster (spec.mode Pull), the agent's identity (GrantAgent), and the agent's one
// RBAC grant, AgentRenewal: a Role and RoleBinding in Namespace that let the agent create
// tokens for its own ServiceAccount and nothing else. It then issues the bootstrap credential,
// a token for the hub API server's own audience, in a kubeconfig the agent uses to request its
// work tokens (audience flotilla.dev/work) and to renew that credential before it expires.
// Deleting the ServiceAccount (`flotilla unjoin`) revokes the credential and every token the
// agent requested with it.

// DefaultAgentCredentialLifetime is how long the bootstrap credential JoinPull issues is valid;
// the agent renews it for as long again when 80% of it has passed.
const DefaultAgentCredentialLifetime = 24 * time.Hour

// AgentKubeconfigUser names the user entry of the agent's hub kubeconfig.
const AgentKubeconfigUser = "flotilla-agent"

// PullJoinOptions describe a pull-mode cluster to join.
type PullJoinOptions struct {
	// Name of the Cluster on the hub.
	Name string
	// Labels go on the Cluster; placements select them.
	Labels map[string]string
	// CredentialLifetime is how long the bootstrap credential is valid (0:
	// DefaultAgentCredentialLifetime; bounds as ValidateTokenLifetime).
	CredentialLifetime time.Duration
	// HubServer, when set, is the hub API server's address written into the agent's kubeconfig
	// (the address the spoke reaches the hub at), instead of the address of the hub connection.
	HubServer string
	// Progress receives one line per step; nil discards. No line carries the credential.
	Progress func(string)
}

// AgentCredential is what a pull-mode cluster's agent needs to reach the hub.
type AgentCredential struct {
	// Kubeconfig holds the hub API server's address and CA and the agent's token: secret.
	Kubeconfig []byte
	// Expires is when the token expires unless the agent renews it.
	Expires time.Time
}

// ModeChangeError refuses joining a cluster in another mode than the one it was joined in.
type ModeChangeError struct {
	Cluster  string
	From, To flotillav1.ClusterMode
}

func (e *ModeChangeError) Error() string {
	return fmt.Sprintf("cluster %s is joined in mode %s, not %s: changing a cluster's mode is not supported "+
		"(the hub and the agent would both deliver, or neither, while it changes). Run `flotilla unjoin %s` first "+
		"(what runs on the spoke stays), then join it again with --mode %s",
		e.Cluster, e.From, e.To, e.Cluster, modeFlag(e.To))
}

func modeFlag(m flotillav1.ClusterMode) string {
	if m == flotillav1.ClusterPull {
		return "pull"
	}
	return "push"
}

// refuseModeChange returns an error if a Cluster of that name exists in another mode than want,
// or, for a pull join, was imported (an importer maintains it, with credentials to push).
func refuseModeChange(ctx context.Context, hub client.Client, name string, want flotillav1.ClusterMode) error {
	c := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("read cluster %s on the hub: %w", name, err)
	}
	if want == flotillav1.ClusterPull {
		if err := imported(c); err != nil {
			return err
		}
	}
	have := c.Spec.Mode
	if have == "" {
		have = flotillav1.ClusterPush
	}
	if have != want {
		return &ModeChangeError{Cluster: name, From: have, To: want}
	}
	return nil
}

// JoinPull joins a pull-mode cluster on the hub alone and returns its agent's bootstrap
// credential. hubCfg is the caller's connection to the hub (its address and CA go into the
// credential, unless opts.HubServer names another address). A Cluster of that name joined in
// push mode or imported is refused (*ModeChangeError, *ImportedError) before anything changes.
//
// Joining again is idempotent and issues a new credential; earlier ones stay valid until they
// expire or the agent stops renewing them. Only deleting the ServiceAccount (Unjoin) revokes
// them all.
func JoinPull(ctx context.Context, hub client.Client, hubCfg *rest.Config, opts PullJoinOptions) (*AgentCredential, error) {
	if err := ValidateName(opts.Name); err != nil {
		return nil, err
	}
	if err := ValidateTokenLifetime(opts.CredentialLifetime); err != nil {
		return nil, err
	}
	lifetime := opts.CredentialLifetime
	if lifetime == 0 {
		lifetime = DefaultAgentCredentialLifetime
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if err := refuseModeChange(ctx, hub, opts.Name, flotillav1.ClusterPull); err != nil {
		return nil, err
	}
	if _, err := GrantAgent(ctx, hub, opts.Name); err != nil {
		return nil, err
	}
	sa := AgentServiceAccount(opts.Name)
	progress(fmt.Sprintf("hub: serviceaccount %s/%s is the agent's identity", Namespace, sa))
	if err := grantRenewal(ctx, hub, opts.Name); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("hub: role and rolebinding %s/%s let it create tokens for itself, nothing else", Namespace, sa))
	cs, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return nil, err
	}
	seconds := int64(lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("issue the agent's credential (a token for serviceaccount %s/%s on the hub): %w", Namespace, sa, err)
	}
	server := opts.HubServer
	if server == "" {
		server = hubCfg.Host
	}
	kc, err := AgentKubeconfig(hubCfg, server, tr.Status.Token)
	if err != nil {
		return nil, err
	}
	if err := applyPullCluster(ctx, hub, opts.Name, opts.Labels); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("hub: cluster.flotilla.dev/%s joined in mode Pull (the hub never connects to it)", opts.Name))
	return &AgentCredential{Kubeconfig: kc, Expires: tr.Status.ExpirationTimestamp.Time}, nil
}

// AgentKubeconfig builds the agent's hub kubeconfig: server, the CA of hubCfg, and token.
func AgentKubeconfig(hubCfg *rest.Config, server, token string) ([]byte, error) {
	ca := hubCfg.CAData
	if len(ca) == 0 && hubCfg.CAFile != "" {
		data, err := os.ReadFile(hubCfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the hub's CA file: %w", err)
		}
		ca = data
	}
	name := "flotilla-hub"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server: server, CertificateAuthorityData: ca, InsecureSkipTLSVerify: hubCfg.Insecure, TLSServerName: hubCfg.ServerName,
	}
	cfg.AuthInfos[AgentKubeconfigUser] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: AgentKubeconfigUser, Namespace: Namespace}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// agentLabels mark what JoinPull creates for cluster's agent on the hub.
func agentLabels(cluster string) map[string]string {
	return map[string]string{flotillav1.LabelCluster: cluster, "app.kubernetes.io/managed-by": "flotilla"}
}

// AgentRenewalRules is the agent's whole RBAC grant on the hub: creating tokens for its own
// ServiceAccount (the TokenRequest API), nothing else.
func AgentRenewalRules(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"},
		Verbs: []string{"create"}, ResourceNames: []string{AgentServiceAccount(cluster)}}}
}

// grantRenewal creates, or sets right, the Role and RoleBinding AgentServiceAccount(cluster) in
// Namespace that grant the agent AgentRenewalRules. One of that name JoinPull did not create
// (it lacks the labels) is refused, not taken over.
func grantRenewal(ctx context.Context, hub client.Client, cluster string) error {
	name := AgentServiceAccount(cluster)
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: agentLabels(cluster)},
		Rules:      AgentRenewalRules(cluster),
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: agentLabels(cluster)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: name}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := refuseForeign(ctx, hub, obj, cluster); err != nil {
			return err
		}
		if err := serverside.Apply(ctx, hub, obj, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s/%s on the hub: %w", obj.GetObjectKind().GroupVersionKind().Kind, Namespace, name, err)
		}
	}
	return nil
}

// refuseForeign returns an error if an object of obj's name exists that was not made for
// cluster's agent.
func refuseForeign(ctx context.Context, hub client.Client, obj client.Object, cluster string) error {
	existing := obj.DeepCopyObject().(client.Object)
	err := hub.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read %s/%s on the hub: %w", obj.GetNamespace(), obj.GetName(), err)
	case existing.GetLabels()[flotillav1.LabelCluster] != cluster:
		return fmt.Errorf("%s %s/%s exists on the hub and was not created for cluster %s's agent (it lacks the label %s=%s): it is not taken over",
			obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName(), cluster, flotillav1.LabelCluster, cluster)
	}
	return nil
}

// revokeRenewal deletes the Role and RoleBinding grantRenewal made for cluster's agent (found
// by their labels and name), and reports which it deleted.
func revokeRenewal(ctx context.Context, hub client.Client, cluster string) ([]string, error) {
	name := AgentServiceAccount(cluster)
	sel := client.MatchingLabels(agentLabels(cluster))
	var deleted []string
	var errs []error
	var bindings rbacv1.RoleBindingList
	if err := hub.List(ctx, &bindings, client.InNamespace(Namespace), sel); err != nil {
		return nil, fmt.Errorf("list rolebindings in %s on the hub: %w", Namespace, err)
	}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if b.Name != name {
			continue
		}
		if err := client.IgnoreNotFound(hub.Delete(ctx, b, client.Preconditions{UID: &b.UID})); err != nil {
			errs = append(errs, fmt.Errorf("delete rolebinding %s/%s on the hub: %w", Namespace, b.Name, err))
			continue
		}
		deleted = append(deleted, "rolebinding "+Namespace+"/"+b.Name)
	}
	var roles rbacv1.RoleList
	if err := hub.List(ctx, &roles, client.InNamespace(Namespace), sel); err != nil {
		return deleted, errors.Join(append(errs, fmt.Errorf("list roles in %s on the hub: %w", Namespace, err))...)
	}
	for i := range roles.Items {
		r := &roles.Items[i]
		if r.Name != name {
			continue
		}
		if err := client.IgnoreNotFound(hub.Delete(ctx, r, client.Preconditions{UID: &r.UID})); err != nil {
			errs = append(errs, fmt.Errorf("delete role %s/%s on the hub: %w", Namespace, r.Name, err))
			continue
		}
		deleted = append(deleted, "role "+Namespace+"/"+r.Name)
	}
	return deleted, errors.Join(errs...)
}

func applyPullCluster(ctx context.Context, hub client.Client, name string, labels map[string]string) error {
	all := map[string]string{}
	maps.Copy(all, labels)
	c := &flotillav1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: flotillav1.GroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Spec:       flotillav1.ClusterSpec{Mode: flotillav1.ClusterPull},
	}
	if err := serverside.Apply(ctx, hub, c, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply cluster %s on the hub: %w", name, err)
	}
	return nil
}
