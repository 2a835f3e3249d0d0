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
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
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
	spokeCfg := opts.Spoke
	if spokeCfg == nil && secretErr == nil {
		key := ref.Key
		if key == "" {
			key = kubeconfigKey
		}
		if cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[key]); err == nil {
			spokeCfg = cfg
		}
	}
	var spokeErr error
	if spokeCfg == nil {
		spokeErr = errors.New("no usable credentials for the spoke; pass --kubeconfig")
	} else {
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
