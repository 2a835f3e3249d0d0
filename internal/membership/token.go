package membership

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// boundToken is a token and the Secret it is bound to: deleting the Secret revokes the token,
// and every token the hub later requests bound to the same Secret.
type boundToken struct {
	token   string
	secret  string
	expires time.Time
}

// issueToken creates a new Secret for sa's token to be bound to and requests a token with the
// given lifetime bound to it. The Secret carries no data; it belongs to sa, so a garbage
// collector removes it with the account.
func (s spoke) issueToken(ctx context.Context, sa *corev1.ServiceAccount, lifetime time.Duration) (*boundToken, error) {
	secrets := s.cs.CoreV1().Secrets(Namespace)
	bound, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: tokenSecretPrefix,
			Namespace:    Namespace,
			Labels:       map[string]string{LabelHub: s.hubID, labelTokenOf: ServiceAccount},
			Annotations: map[string]string{"flotilla.dev/purpose": "Flotilla's token for this spoke is bound to this Secret: " +
				"deleting it revokes the token. `flotilla join` replaces it; `flotilla unjoin` deletes it."},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID}},
		},
		Type: corev1.SecretTypeOpaque,
	}, metav1.CreateOptions{FieldManager: spokeFieldManager})
	if err != nil {
		return nil, fmt.Errorf("create the Secret the token is bound to: %w", err)
	}
	seconds := int64(lifetime / time.Second)
	tr, err := s.cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &seconds,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: bound.Name, UID: bound.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		_ = secrets.Delete(ctx, bound.Name, metav1.DeleteOptions{})
		return nil, fmt.Errorf("request a token: %w", err)
	}
	return &boundToken{token: tr.Status.Token, secret: bound.Name, expires: tr.Status.ExpirationTimestamp.Time}, nil
}

// revokeTokens deletes the Secrets this hub's tokens are bound to, except keep, which revokes
// every token bound to them. It returns the names of the Secrets deleted.
func (s spoke) revokeTokens(ctx context.Context, keep string) ([]string, error) {
	secrets := s.cs.CoreV1().Secrets(Namespace)
	sel := labels.SelectorFromSet(labels.Set{LabelHub: s.hubID, labelTokenOf: ServiceAccount}).String()
	list, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the Secrets tokens are bound to: %w", err)
	}
	var deleted []string
	for _, sec := range list.Items {
		if sec.Name == keep {
			continue
		}
		if err := secrets.Delete(ctx, sec.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("delete secret %s/%s (revoking the token bound to it): %w", Namespace, sec.Name, err)
		}
		deleted = append(deleted, sec.Name)
	}
	return deleted, nil
}
