package clusterwork

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// A token's user name says which ServiceAccount it was issued for, not that the account is the
// one `flotilla join --mode pull` made: an admin may create an account of that name by hand, and
// unjoin, which deletes only accounts it made, would not revoke it. So the account must also
// carry the cluster's label, and the token's UID (the account's UID, which the TokenReview
// returns) must be the labelled account's: a token of an account deleted and made again is
// refused too.
// +kubebuilder:rbac:groups="",namespace=flotilla-system,resources=serviceaccounts,verbs=get

// accountLook is the endpoint's last look at one cluster's agent account.
type accountLook struct {
	uid     string // the labelled account's UID; "" when there is none
	checked time.Time
}

// accounts remembers looks at agent accounts for CacheTTL, as long as a token review is
// remembered, so that a steady fleet reads no account per request.
type accounts struct {
	mu    sync.Mutex
	looks map[string]accountLook
}

// agentAccount returns "" when uid is the UID of cluster's agent account as join made it, else
// why the request is refused (403). A failed read is returned as an error and not remembered.
func (h *Handler) agentAccount(ctx context.Context, cluster, uid string) (string, error) {
	a := &h.accounts
	a.mu.Lock()
	look, known := a.looks[cluster]
	a.mu.Unlock()
	if !known || time.Since(look.checked) >= CacheTTL || (look.uid != uid && uid != "") {
		var err error
		if look, err = h.lookAtAccount(ctx, cluster); err != nil {
			return "", err
		}
		a.mu.Lock()
		if a.looks == nil {
			a.looks = map[string]accountLook{}
		}
		a.looks[cluster] = look
		a.mu.Unlock()
	}
	name := membership.Namespace + "/" + membership.AgentServiceAccount(cluster)
	switch {
	case look.uid == "":
		return fmt.Sprintf("serviceaccount %s is not cluster %s's agent identity (it is missing, or lacks the label %s=%s that `flotilla join --mode pull` gives it): join the cluster again",
			name, cluster, flotillav1.LabelCluster, cluster), nil
	case look.uid != uid:
		return fmt.Sprintf("this token was issued for an earlier serviceaccount %s, deleted since: issue a new one", name), nil
	}
	return "", nil
}

// lookAtAccount reads cluster's agent account directly (the hub cache does not watch
// ServiceAccounts).
func (h *Handler) lookAtAccount(ctx context.Context, cluster string) (accountLook, error) {
	reader := h.Accounts
	if reader == nil {
		reader = h.Hub
	}
	sa := &corev1.ServiceAccount{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: membership.Namespace, Name: membership.AgentServiceAccount(cluster)}, sa)
	switch {
	case apierrors.IsNotFound(err):
		return accountLook{checked: time.Now()}, nil
	case err != nil:
		return accountLook{}, fmt.Errorf("read the agent's serviceaccount: %w", err)
	case sa.Labels[flotillav1.LabelCluster] != cluster || sa.DeletionTimestamp != nil:
		return accountLook{checked: time.Now()}, nil
	}
	return accountLook{uid: string(sa.UID), checked: time.Now()}, nil
}
