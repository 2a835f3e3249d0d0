package membership

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// A pull-mode cluster's agent reads its work from the hub (package clusterwork) as a
// ServiceAccount of its own on the hub, AgentServiceAccount(cluster) in Namespace. The account
// holds no RBAC grant: the hub's work endpoint recognises it by name (AgentUser) and serves it
// that cluster's work alone. Its tokens come from the TokenRequest API (bound, short-lived, with
// the endpoint's audience); deleting the account revokes every one of them.

// agentPrefix starts the name of every agent ServiceAccount.
const agentPrefix = "agent-"

// AgentServiceAccount is the name, in Namespace on the hub, of the identity cluster's pull-mode
// agent acts as. A cluster name is a DNS-1123 label, so the name is a valid ServiceAccount name.
func AgentServiceAccount(cluster string) string { return agentPrefix + cluster }

// AgentUser is the user name the hub authenticates AgentServiceAccount(cluster) as.
func AgentUser(cluster string) string {
	return serviceaccount.MakeUsername(Namespace, AgentServiceAccount(cluster))
}

// GrantAgent creates cluster's agent identity on the hub (AgentServiceAccount in Namespace,
// labelled with the cluster), or finds it there. An account of that name that GrantAgent did not
// create (it lacks the label) is refused, not taken over. It grants nothing by RBAC.
func GrantAgent(ctx context.Context, hub client.Client, cluster string) (*corev1.ServiceAccount, error) {
	if err := ValidateName(cluster); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s on the hub: %w", Namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: AgentServiceAccount(cluster), Namespace: Namespace,
		Labels: map[string]string{flotillav1.LabelCluster: cluster, "app.kubernetes.io/managed-by": "flotilla"},
		Annotations: map[string]string{"flotilla.dev/purpose": "The identity of cluster " + cluster + "'s pull-mode agent: the hub serves it that " +
			"cluster's work alone. Deleting it (`flotilla unjoin`) revokes every token issued for it."},
	}}
	err := hub.Create(ctx, sa)
	if err == nil {
		return sa, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create serviceaccount %s/%s on the hub: %w", Namespace, sa.Name, err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(sa), sa); err != nil {
		return nil, fmt.Errorf("read serviceaccount %s/%s on the hub: %w", Namespace, sa.Name, err)
	}
	if sa.Labels[flotillav1.LabelCluster] != cluster {
		return nil, fmt.Errorf("serviceaccount %s/%s exists on the hub and was not created for cluster %s's agent (it lacks the label %s=%s): "+
			"it is not taken over", Namespace, sa.Name, cluster, flotillav1.LabelCluster, cluster)
	}
	return sa, nil
}

// RevokeAgent deletes cluster's agent identity from the hub, which revokes every token issued
// for it, and reports whether it was there. An account of that name that GrantAgent did not
// create is left alone.
func RevokeAgent(ctx context.Context, hub client.Client, cluster string) (bool, error) {
	sa := &corev1.ServiceAccount{}
	key := client.ObjectKey{Namespace: Namespace, Name: AgentServiceAccount(cluster)}
	if err := hub.Get(ctx, key, sa); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("read serviceaccount %s on the hub: %w", key, err)
	}
	if sa.Labels[flotillav1.LabelCluster] != cluster {
		return false, nil
	}
	// Only the account read above: one re-created meanwhile is someone else's to remove.
	pre := client.Preconditions{UID: &sa.UID}
	if err := client.IgnoreNotFound(hub.Delete(ctx, sa, pre)); err != nil {
		return false, fmt.Errorf("delete serviceaccount %s on the hub: %w", key, err)
	}
	return true, nil
}
