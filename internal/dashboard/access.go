package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// accessTTL is how long an answer of the hub's authorizer is reused for a viewer: a page and
// its live updates ask the same questions many times, and an answer may be this much late.
const accessTTL = 5 * time.Second

// identity is who a request acts as.
type identity struct {
	User   string
	UID    string
	Groups []string
	Extra  map[string]authorizationv1.ExtraValue
}

func (id identity) key() string {
	h := sha256.New()
	h.Write([]byte(id.User + "\x00" + id.UID + "\x00" + strings.Join(id.Groups, "\x00")))
	for k, v := range id.Extra {
		h.Write([]byte("\x01" + k + "\x00" + strings.Join(v, "\x00")))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// attrs is one question to the authorizer: may the viewer verb resource in namespace?
type attrs struct {
	Verb, Group, Resource, Namespace, Name string
}

// authorizer answers whether an identity may do something on the hub, reusing answers for
// accessTTL. self is set in local mode: the questions are the kubeconfig user's own
// (SelfSubjectAccessReview), not someone else's (SubjectAccessReview).
type authorizer struct {
	hub  client.Client
	self bool

	mu      sync.Mutex
	answers map[string]answer
}

type answer struct {
	allowed bool
	until   time.Time
}

func newAuthorizer(hub client.Client, self bool) *authorizer {
	return &authorizer{hub: hub, self: self, answers: map[string]answer{}}
}

// viewer is one request's identity with the authorizer that answers for it.
type viewer struct {
	id   identity
	key  string // id.key(), computed once per request
	csrf string // the session's token for forms that write (approve.go)
	auth *authorizer
	ctx  context.Context
}

// can says whether the viewer may do a; an error of the authorizer is a no.
func (v viewer) can(a attrs) bool {
	if v.key == "" {
		v.key = v.id.key()
	}
	return v.auth.allowed(v.ctx, v.id, v.key, a)
}

// canList says whether the viewer may list resource (of group flotilla.dev unless it is
// events) in namespace ("" for a cluster-scoped resource, or every namespace).
func (v viewer) canList(resource, namespace string) bool {
	return v.can(attrs{Verb: "list", Group: groupOf(resource), Resource: resource, Namespace: namespace})
}

func groupOf(resource string) string {
	for _, k := range cachedKinds {
		if k.resource == resource {
			return k.group
		}
	}
	return ""
}

func (a *authorizer) allowed(ctx context.Context, id identity, idKey string, at attrs) bool {
	key := idKey + "\x02" + at.Verb + "\x00" + at.Group + "\x00" + at.Resource + "\x00" + at.Namespace + "\x00" + at.Name
	now := time.Now()
	a.mu.Lock()
	if ans, ok := a.answers[key]; ok && now.Before(ans.until) {
		a.mu.Unlock()
		return ans.allowed
	}
	a.mu.Unlock()
	res := &authorizationv1.ResourceAttributes{Verb: at.Verb, Group: at.Group, Resource: at.Resource, Namespace: at.Namespace, Name: at.Name}
	allowed := false
	if a.self {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res}}
		if err := a.hub.Create(ctx, review); err == nil {
			allowed = review.Status.Allowed
		}
	} else {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: res, User: id.User, UID: id.UID, Groups: id.Groups, Extra: id.Extra,
		}}
		if err := a.hub.Create(ctx, review); err == nil {
			allowed = review.Status.Allowed
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.answers) > 10000 {
		a.answers = map[string]answer{} // bounded: forget everything rather than grow
	}
	a.answers[key] = answer{allowed: allowed, until: now.Add(accessTTL)}
	return allowed
}
