package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tokenCookie holds the bearer token the login page was given, for browsers that cannot send
// an Authorization header themselves.
const tokenCookie = "flotilla-dashboard-token"

// errNoToken says a request carries no credential.
var errNoToken = errors.New("no bearer token")

// authenticator finds who a request to the hub's dashboard acts as: the bearer token's user
// (TokenReview), or the user it impersonates when the hub lets that user impersonate.
type authenticator struct {
	hub   client.Client
	authz *authorizer

	mu     sync.Mutex
	tokens map[string]tokenAnswer
}

type tokenAnswer struct {
	id    identity
	err   error
	until time.Time
}

func newAuthenticator(hub client.Client, authz *authorizer) *authenticator {
	return &authenticator{hub: hub, authz: authz, tokens: map[string]tokenAnswer{}}
}

// bearerToken returns the token of the Authorization header, else of the login cookie.
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// identify returns the identity a request acts as.
func (a *authenticator) identify(r *http.Request) (identity, error) {
	token := bearerToken(r)
	if token == "" {
		return identity{}, errNoToken
	}
	id, err := a.review(r.Context(), token)
	if err != nil {
		return identity{}, err
	}
	return a.impersonate(r, id)
}

// review asks the hub who a token is, reusing the answer for accessTTL.
func (a *authenticator) review(ctx context.Context, token string) (identity, error) {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	now := time.Now()
	a.mu.Lock()
	if ans, ok := a.tokens[key]; ok && now.Before(ans.until) {
		a.mu.Unlock()
		return ans.id, ans.err
	}
	a.mu.Unlock()
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	var ans tokenAnswer
	if err := a.hub.Create(ctx, tr); err != nil {
		return identity{}, err // not remembered: the hub may answer next time
	}
	if !tr.Status.Authenticated {
		ans.err = errors.New("the hub does not accept this token")
	} else {
		u := tr.Status.User
		ans.id = identity{User: u.Username, UID: u.UID, Groups: u.Groups, Extra: map[string]authorizationv1.ExtraValue{}}
		for k, v := range u.Extra {
			ans.id.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	ans.until = now.Add(accessTTL)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokens) > 10000 {
		a.tokens = map[string]tokenAnswer{}
	}
	a.tokens[key] = ans
	return ans.id, ans.err
}

// impersonate applies Impersonate-User and Impersonate-Group headers, as the API server does:
// only where the authenticated user may impersonate that user and each of those groups.
func (a *authenticator) impersonate(r *http.Request, id identity) (identity, error) {
	user := r.Header.Get("Impersonate-User")
	groups := r.Header.Values("Impersonate-Group")
	if user == "" {
		if len(groups) > 0 {
			return identity{}, errors.New("Impersonate-Group needs Impersonate-User")
		}
		return id, nil
	}
	v := viewer{id: id, auth: a.authz, ctx: r.Context()}
	if !v.can(attrs{Verb: "impersonate", Resource: "users", Name: user}) {
		return identity{}, errors.New(id.User + " may not impersonate " + user)
	}
	for _, g := range groups {
		if !v.can(attrs{Verb: "impersonate", Resource: "groups", Name: g}) {
			return identity{}, errors.New(id.User + " may not impersonate group " + g)
		}
	}
	return identity{User: user, Groups: append(groups, "system:authenticated")}, nil
}
