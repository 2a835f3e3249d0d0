package clusterwork

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
)

// Agents' tokens are reviewed by the hub API server.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create

// Audience is the audience an agent's token must be issued for (TokenRequest
// spec.audiences, `kubectl create token --audience`). A token for the hub API server is
// refused here, and a token for the work endpoint is refused by the hub API server.
const Audience = "flotilla.dev/work"

// CacheTTL is how long the hub's answer about a token is remembered: how late a revoked
// identity (its ServiceAccount deleted) may still be served.
const CacheTTL = 10 * time.Second

// NewAuthenticator authenticates requests' bearer tokens with TokenReviews against the hub
// (cfg), for Audience, as apiserver's delegating authenticator does: no anonymous access, and
// answers remembered for CacheTTL.
func NewAuthenticator(cfg *rest.Config) (authenticator.Request, error) {
	reviews, err := authenticationv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	a, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  reviews,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5},
		CacheTTL:                 CacheTTL,
		APIAudiences:             authenticator.Audiences{Audience},
	}.New()
	if err != nil {
		return nil, fmt.Errorf("create the work endpoint's authenticator: %w", err)
	}
	return a, nil
}
