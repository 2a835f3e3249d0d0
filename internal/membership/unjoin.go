package membership

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
)

// UnjoinOptions describes a spoke to remove.
type UnjoinOptions struct {
	Name string
	// Spoke is an admin connection to the spoke; nil means use the credentials stored on the
	// hub (Flotilla's own ServiceAccount, which may delete itself).
	Spoke *rest.Config
	// Progress receives one line per step; nil discards.
	Progress func(string)
}

// ErrNotJoined is returned when there is no Cluster of that name.
var ErrNotJoined = errors.New("no such cluster")

// Unjoin removes Flotilla's ServiceAccount from the spoke and the Cluster and its credentials
// from the hub. It never touches workloads. When the spoke cannot be reached, the hub side is
// still removed and the returned error says what to delete on the spoke by hand.
//
// Without opts.Spoke the stored kubeconfig is used, read with package kubeconfig: one that
// names a plugin or a local file is refused (a *kubeconfig.RefusedError) before anything
// changes, since it would run a program or read a file where Unjoin runs.
func Unjoin(ctx context.Context, hub client.Client, opts UnjoinOptions) error {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	c := &flotillav1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: opts.Name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster %q: %w (see `flotilla get clusters`)", opts.Name, ErrNotJoined)
		}
		return err
	}
	ref := c.Spec.Credentials
	secret := &corev1.Secret{}
	secretErr := hub.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret)
	spokeCfg, spokeErr := opts.Spoke, error(nil)
	switch {
	case spokeCfg != nil:
		// The operator's own connection.
	case secretErr != nil:
		spokeErr = fmt.Errorf("no usable credentials for the spoke (secret %s/%s: %w); pass --kubeconfig", ref.Namespace, ref.Name, secretErr)
	default:
		spokeCfg, spokeErr = storedCredentials(secret, ref.Key)
		var refused *kubeconfig.RefusedError
		if errors.As(spokeErr, &refused) {
			// Someone put a kubeconfig on the hub that would run a program or read a file
			// here. Change nothing, so the Secret stays for inspection.
			return fmt.Errorf("unjoin %s: nothing changed: %w; to unjoin, pass --kubeconfig with an admin kubeconfig for the spoke", c.Name, spokeErr)
		}
	}
	if spokeErr == nil {
		spokeErr = removeFromSpoke(ctx, spokeCfg)
	}
	if spokeErr == nil {
		progress(fmt.Sprintf("spoke: serviceaccount %s/%s and clusterrolebinding %s removed (token revoked)", Namespace, ServiceAccount, ClusterRoleBinding))
	}
	if err := client.IgnoreNotFound(hub.Delete(ctx, c)); err != nil {
		return fmt.Errorf("delete cluster %s on the hub: %w", c.Name, err)
	}
	progress(fmt.Sprintf("hub: cluster.flotilla.dev/%s deleted", c.Name))
	// Only a Secret that joining created is deleted; a user's own Secret stays.
	if secretErr == nil && secret.Labels[flotillav1.LabelCluster] == c.Name {
		if err := client.IgnoreNotFound(hub.Delete(ctx, secret)); err != nil {
			return fmt.Errorf("delete secret %s/%s on the hub: %w", secret.Namespace, secret.Name, err)
		}
		progress(fmt.Sprintf("hub: secret %s/%s deleted", secret.Namespace, secret.Name))
	}
	if spokeErr != nil {
		return fmt.Errorf("cluster %s removed from the hub, but Flotilla's ServiceAccount could not be removed from the spoke (%w); "+
			"remove it there with: kubectl delete clusterrolebinding %s && kubectl -n %s delete serviceaccount %s",
			c.Name, spokeErr, ClusterRoleBinding, Namespace, ServiceAccount)
	}
	return nil
}

// storedCredentials parses the kubeconfig a Cluster's Secret holds with the hardened loader,
// which refuses plugins and file references: they would run or be read on the workstation
// where `flotilla unjoin` runs.
func storedCredentials(secret *corev1.Secret, key string) (*rest.Config, error) {
	if key == "" {
		key = kubeconfigKey
	}
	cfg, err := kubeconfig.Parse(secret.Data[key])
	if err != nil {
		return nil, fmt.Errorf("key %q of secret %s/%s: %w", key, secret.Namespace, secret.Name, err)
	}
	return cfg, nil
}

func removeFromSpoke(ctx context.Context, cfg *rest.Config) error {
	spoke, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	err = spoke.RbacV1().ClusterRoleBindings().Delete(ctx, ClusterRoleBinding, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// Deleting the ServiceAccount revokes every token issued for it. Flotilla's own credentials
	// may still do it through the self-removal Role.
	err = spoke.CoreV1().ServiceAccounts(Namespace).Delete(ctx, ServiceAccount, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// With an admin connection the self-removal Role goes too; with Flotilla's own (now revoked)
	// token these calls are refused, and the Role, which grants nothing to anyone who exists,
	// stays.
	_ = spoke.RbacV1().RoleBindings(Namespace).Delete(ctx, selfRemoval, metav1.DeleteOptions{})
	_ = spoke.RbacV1().Roles(Namespace).Delete(ctx, selfRemoval, metav1.DeleteOptions{})
	return nil
}
