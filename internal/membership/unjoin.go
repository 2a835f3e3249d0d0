package membership

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// Unjoin removes from the spoke what join created there from this hub (see removeFromSpoke),
// which revokes Flotilla's tokens, and the Cluster, its credentials and its pull-mode agent's
// identity (RevokeAgent) from the hub. It never
// touches workloads, nor a spoke object of join's names that join from this hub did not create.
// When the spoke cannot be reached, the hub side is still removed and the returned error says
// what to delete on the spoke by hand.
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
	if err := imported(c); err != nil {
		// Before anything changes: the importer would re-create the Cluster, and join created
		// nothing on its spoke.
		return err
	}
	if c.Pulls() {
		// The hub never connected to it, and joining it created nothing on its spoke.
		return unjoinPull(ctx, hub, c, opts.Spoke, progress)
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
	hubID := ""
	if spokeErr == nil {
		hubID, spokeErr = hubIdentity(ctx, hub)
	}
	var cs kubernetes.Interface
	if spokeErr == nil {
		cs, spokeErr = kubernetes.NewForConfig(spokeCfg)
	}
	if spokeErr == nil {
		spokeErr = removeFromSpoke(ctx, cs, hubID, opts.Spoke == nil, progress)
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
	// A pull-mode agent's identity goes too, which revokes every token issued for it.
	if err := removeAgent(ctx, hub, c.Name, progress); err != nil {
		return err
	}
	if spokeErr != nil {
		return fmt.Errorf("cluster %s removed from the hub, but Flotilla's objects could not all be removed from the spoke (%w); "+
			"remove them there with: %s", c.Name, spokeErr, manualRemoval(hubID))
	}
	return nil
}

// unjoinPull removes a pull-mode cluster from the hub: its agent's identity and grant, then the
// Cluster. The agent's tokens die with its ServiceAccount; what the agent delivered on the
// spoke stays (the agent, refused by the hub, keeps it and deletes nothing). The identity goes
// first so that the agent is refused as soon as the hub's token cache allows, rather than served
// the empty work of a cluster being deleted.
//
// With spokeCfg (the operator's connection, --kubeconfig), the Secret AgentCredentialSecret that
// join may have stored there is deleted too, if it carries this hub's label.
func unjoinPull(ctx context.Context, hub client.Client, c *flotillav1.Cluster, spokeCfg *rest.Config, progress func(string)) error {
	if err := removeAgent(ctx, hub, c.Name, progress); err != nil {
		return err
	}
	if err := client.IgnoreNotFound(hub.Delete(ctx, c)); err != nil {
		return fmt.Errorf("delete cluster %s on the hub: %w", c.Name, err)
	}
	progress(fmt.Sprintf("hub: cluster.flotilla.dev/%s deleted", c.Name))
	if spokeCfg == nil {
		progress(fmt.Sprintf("spoke: not reached (the hub never connects to a pull cluster); stop the agent there: the hub now refuses it, "+
			"and it keeps what it delivered, deleting nothing. If join stored its credential there, the Secret %s/%s holds a revoked token: "+
			"delete it, or unjoin with --kubeconfig", Namespace, AgentCredentialSecret))
		return nil
	}
	hubID, err := hubIdentity(ctx, hub)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(spokeCfg)
	if err != nil {
		return err
	}
	s := spoke{cs: cs, hubID: hubID}
	secrets := cs.CoreV1().Secrets(Namespace)
	did, err := s.removeOwned(ctx, spokeObject{"secret", Namespace + "/" + AgentCredentialSecret,
		func(ctx context.Context) (metav1.Object, error) {
			return secrets.Get(ctx, AgentCredentialSecret, metav1.GetOptions{})
		},
		func(ctx context.Context, uid types.UID) error {
			return secrets.Delete(ctx, AgentCredentialSecret, deleteIf(uid))
		}})
	switch {
	case err != nil:
		return fmt.Errorf("cluster %s removed from the hub, but the agent's credential Secret on the spoke: %w", c.Name, err)
	case did == removed:
		progress(fmt.Sprintf("spoke: secret %s/%s (the agent's revoked credential) removed", Namespace, AgentCredentialSecret))
	case did == notOurs:
		progress(fmt.Sprintf("spoke: secret %s/%s left in place: `flotilla join` from this hub did not create it", Namespace, AgentCredentialSecret))
	}
	progress("spoke: stop the agent there: the hub now refuses it, and it keeps what it delivered, deleting nothing")
	return nil
}

// removeAgent deletes cluster's agent identity (which revokes every token issued for it) and
// its grant, if JoinPull or GrantAgent made them.
func removeAgent(ctx context.Context, hub client.Client, cluster string, progress func(string)) error {
	revoked, err := RevokeAgent(ctx, hub, cluster)
	if err != nil {
		return err
	}
	if revoked {
		progress(fmt.Sprintf("hub: serviceaccount %s/%s deleted (every token of the cluster's agent revoked)", Namespace, AgentServiceAccount(cluster)))
	}
	deleted, err := revokeRenewal(ctx, hub, cluster)
	for _, d := range deleted {
		progress("hub: " + d + " deleted")
	}
	return err
}

// manualRemoval is the command that removes what join created on a spoke, selected by this
// hub's label when its ID is known.
func manualRemoval(hubID string) string {
	if hubID == "" {
		return fmt.Sprintf("kubectl delete clusterrolebinding %s; kubectl delete clusterrole %s; kubectl -n %s delete serviceaccount %s "+
			"(check first that they carry the label %s of this hub)", ClusterRoleBinding, DeliveryClusterRole, Namespace, ServiceAccount, LabelHub)
	}
	sel := LabelHub + "=" + hubID
	return fmt.Sprintf("kubectl delete clusterrolebinding,clusterrole -l %s && kubectl -n %s delete serviceaccount,secret,role,rolebinding -l %s", sel, Namespace, sel)
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

// removeFromSpoke removes what join created on the spoke from this hub: the binding, the
// default ClusterRole, the ServiceAccount (deleting it revokes every token issued for it), the
// Secrets its tokens are bound to and its self-access Role. An object of the same name that
// join did not create from this hub stays, and is reported.
//
// With Flotilla's own credentials (own), the ServiceAccount deletes itself through its
// self-access Role, and its token stops working: what is left (the token Secrets and the Role,
// which grant nothing to anyone who exists) belongs to the ServiceAccount, and the spoke's
// garbage collector removes it.
func removeFromSpoke(ctx context.Context, cs kubernetes.Interface, hubID string, own bool, progress func(string)) error {
	s := spoke{cs: cs, hubID: hubID}
	found := false // whether any object join creates was there
	remove := func(o spokeObject) error {
		did, err := s.removeOwned(ctx, o)
		if err != nil {
			return err
		}
		switch did {
		case removed:
			found = true
			progress(fmt.Sprintf("spoke: %s %s removed", o.kind, o.name))
		case notOurs:
			found = true
			progress(fmt.Sprintf("spoke: %s %s left in place: `flotilla join` from this hub did not create it", o.kind, o.name))
		}
		return nil
	}
	// With Flotilla's own credentials, what a narrow grant does not let it remove is reported
	// at the end, after the ServiceAccount (and so every token) is gone.
	var left []error
	// The namespace identities' RoleBindings first, while the grant still allows it. Left
	// behind, they would grant nothing anyone can use: only this ServiceAccount may act as
	// their subjects.
	if err := s.removeNamespaceBindings(ctx, progress); err != nil {
		if !own || !apierrors.IsForbidden(err) {
			return err
		}
		left = append(left, err)
	}
	// The binding goes first. Flotilla's own credentials lose their grant with it; the default
	// ClusterRole belongs to the binding and goes with it (garbage collector).
	if err := remove(s.clusterRoleBinding()); err != nil {
		if !own || !apierrors.IsForbidden(err) {
			return err
		}
		left = append(left, err)
	}
	if err := remove(s.deliveryRole()); err != nil {
		switch {
		case own && apierrors.IsForbidden(err) && len(left) == 0:
			progress(fmt.Sprintf("spoke: clusterrole %s goes with its binding (garbage collector)", DeliveryClusterRole))
		case own && apierrors.IsForbidden(err):
			left = append(left, err)
		default:
			return err
		}
	}
	did, err := s.removeOwned(ctx, s.serviceAccount())
	switch {
	case err != nil:
		return errors.Join(append(left, err)...)
	case did == removed:
		found = true
		progress(fmt.Sprintf("spoke: serviceaccount %s/%s removed (every token issued for it revoked)", Namespace, ServiceAccount))
	case did == notOurs:
		found = true
		progress(fmt.Sprintf("spoke: serviceaccount %s/%s left in place: `flotilla join` from this hub did not create it", Namespace, ServiceAccount))
	}
	revoked, err := s.revokeTokens(ctx, "")
	if len(revoked) > 0 {
		found = true
		progress(fmt.Sprintf("spoke: %d secrets its tokens were bound to removed", len(revoked)))
	}
	if err == nil {
		err = remove(s.selfRoleBinding())
	}
	if err == nil {
		err = remove(s.selfRole())
	}
	if own && (apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)) {
		// Flotilla's token died with its ServiceAccount.
		progress(fmt.Sprintf("spoke: the Secrets its tokens were bound to and role %s/%s go with the serviceaccount (garbage collector)", Namespace, selfAccess))
		err = nil
	}
	if err == nil && len(left) == 0 && !found {
		progress("spoke: nothing of `flotilla join` from this hub was there to remove")
	}
	return errors.Join(append(left, err)...)
}
