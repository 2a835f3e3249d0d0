package inventory

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The hub renews the token of a credentials Secret that `flotilla join` wrote when less than
// Options.RenewWhenRemaining of its lifetime is left: it asks the spoke's TokenRequest API,
// as Flotilla's own ServiceAccount (join grants it create on its own serviceaccounts/token and
// nothing else for this), for a token for the same account, bound to the same spoke Secret and
// with the same lifetime, and writes it into the hub Secret. The Secret's change reconnects
// to the spoke with the new token, as any rotation does. The previous token stays valid until
// it expires; deleting the spoke Secret, which join and unjoin do, revokes both.
const (
	// renewRetry is how long a failed renewal waits before the next attempt.
	renewRetry = time.Minute
	// renewTimeout bounds one renewal: a TokenRequest on the spoke and a write on the hub.
	renewTimeout = 15 * time.Second
)

// errCredentialsChanged means the Secret no longer holds the token being renewed: someone
// (`flotilla join`, or the hub a moment ago) wrote new credentials, which replace the member.
var errCredentialsChanged = errors.New("the credentials Secret changed")

// credentialsVerdict is the CredentialsValid condition for creds at now, and whether a renewal
// is due. pending is the token the hub issued in place of creds' token and has not yet read
// back from the Secret (nil if none); renewedByHub says the hub issued creds' token; failure is
// why the last renewal failed ("" if it did not).
func credentialsVerdict(creds *credentials, pending *tokenClaims, now time.Time, fraction float64, renewedByHub bool, failure string) (observation, bool) {
	tok := creds.token
	if pending != nil {
		tok, renewedByHub, failure = pending, true, ""
	}
	if tok == nil {
		return observation{metav1.ConditionTrue, flotillav1.ReasonNoExpiry,
			"the credentials carry no token with an expiry that Flotilla can read; the hub does not renew them"}, false
	}
	expires, from := stamp(tok.expires()), stamp(tok.renewFrom(fraction))
	switch {
	case !now.Before(tok.expires()):
		return observation{metav1.ConditionFalse, flotillav1.ReasonExpired,
			fmt.Sprintf("the token expired at %s; run `flotilla join` for this cluster again", expires)}, false
	case now.Before(tok.renewFrom(fraction)) && creds.notRenewable != "":
		return observation{metav1.ConditionTrue, flotillav1.ReasonCredentialsValid,
			fmt.Sprintf("the token is valid until %s; the hub cannot renew it (%s): replace it before then", expires, creds.notRenewable)}, false
	case now.Before(tok.renewFrom(fraction)) && renewedByHub:
		return observation{metav1.ConditionTrue, flotillav1.ReasonRenewed,
			fmt.Sprintf("the hub renewed the token; it is valid until %s, and the hub renews it again from %s", expires, from)}, false
	case now.Before(tok.renewFrom(fraction)):
		return observation{metav1.ConditionTrue, flotillav1.ReasonCredentialsValid,
			fmt.Sprintf("the token is valid until %s; the hub renews it from %s", expires, from)}, false
	case creds.notRenewable != "":
		return observation{metav1.ConditionTrue, flotillav1.ReasonExpiringSoon,
			fmt.Sprintf("the token expires at %s and the hub cannot renew it (%s); run `flotilla join` for this cluster again before then", expires, creds.notRenewable)}, false
	case failure != "":
		return observation{metav1.ConditionFalse, flotillav1.ReasonRenewFailed,
			fmt.Sprintf("renewing the token failed: %s; it stays valid until %s, and the hub keeps trying", failure, expires)}, true
	}
	return observation{metav1.ConditionTrue, flotillav1.ReasonExpiringSoon,
		fmt.Sprintf("the token expires at %s; the hub is renewing it", expires)}, true
}

// stamp formats a time for a condition message.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// checkCredentials judges a member's credentials after a probe, renews its token when that is
// due and the spoke answered (reachable), exports the time left, and reports whether the
// verdict changed. It runs on the member's prober goroutine only.
func (p *Provider) checkCredentials(ctx context.Context, m *member, reachable bool) bool {
	now := time.Now()
	obs, due := credentialsVerdict(m.creds, m.pending, now, p.opts.RenewWhenRemaining, p.renewedByHub(m.name, m.creds), m.renewFailure)
	if due && reachable && !now.Before(m.retryAt) && p.isElected() {
		issued, err := p.renew(ctx, m)
		switch {
		case errors.Is(err, errCredentialsChanged) || ctx.Err() != nil:
			// New credentials are on their way to a new member.
		case err != nil:
			m.renewFailure, m.retryAt = boundMessage(err.Error()), now.Add(renewRetry)
			p.log.Info("Cannot renew the spoke token; will retry", "cluster", m.name, "error", m.renewFailure)
		default:
			m.pending, m.renewFailure = issued, ""
			p.mu.Lock()
			p.renewed[m.name] = issued.Expiry
			p.mu.Unlock()
			p.log.Info("Renewed the spoke token", "cluster", m.name, "expires", stamp(issued.expires()))
		}
		obs, _ = credentialsVerdict(m.creds, m.pending, now, p.opts.RenewWhenRemaining, p.renewedByHub(m.name, m.creds), m.renewFailure)
	}
	tok := m.creds.token
	if m.pending != nil {
		tok = m.pending
	}
	observeCredentialExpiry(m.name, tok, now)
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := m.credObs != obs
	m.credObs = obs
	return changed
}

// renewedByHub says whether the hub issued the token of creds.
func (p *Provider) renewedByHub(cluster string, creds *credentials) bool {
	if creds.token == nil {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.renewed[cluster] == creds.token.Expiry
}

// renew requests a new token for a member's ServiceAccount on the spoke and writes it into the
// hub Secret in place of the old one, and returns the new token's claims. The Secret is
// written only if it still holds the member's token, and only if nobody wrote it since it was
// read (optimistic lock).
func (p *Provider) renew(ctx context.Context, m *member) (*tokenClaims, error) {
	if p.hub == nil || p.reader == nil {
		return nil, errors.New("the hub controller has no client to write credentials with")
	}
	ctx, cancel := context.WithTimeout(ctx, renewTimeout)
	defer cancel()
	secret := &corev1.Secret{}
	if err := p.reader.Get(ctx, m.creds.secret, secret); err != nil {
		return nil, fmt.Errorf("read Secret %s: %w", m.creds.secret, err)
	}
	raw, err := clientcmd.Load(secret.Data[m.creds.key])
	if err != nil {
		return nil, errCredentialsChanged // it parsed when the member was made: it changed since
	}
	current := raw.Contexts[raw.CurrentContext]
	if current == nil || raw.AuthInfos[current.AuthInfo] == nil || raw.AuthInfos[current.AuthInfo].Token != m.creds.config.BearerToken {
		return nil, errCredentialsChanged
	}
	old := m.creds.token
	cfg := p.restConfigFor(m)
	cfg.Timeout = renewTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	seconds := max(int64(old.lifetime()/time.Second), 600) // the API server's minimum
	sa := old.Kubernetes.ServiceAccount.Name
	tr, err := cs.CoreV1().ServiceAccounts(old.Kubernetes.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &seconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				Kind: "Secret", APIVersion: "v1", Name: old.Kubernetes.Secret.Name, UID: types.UID(old.Kubernetes.Secret.UID)},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for ServiceAccount %s/%s on the spoke: %w", old.Kubernetes.Namespace, sa, err)
	}
	issued := parseToken(tr.Status.Token)
	if issued == nil {
		return nil, errors.New("the spoke issued a token without a readable expiry")
	}
	raw.AuthInfos[current.AuthInfo].Token = tr.Status.Token
	data, err := clientcmd.Write(*raw)
	if err != nil {
		return nil, errors.New("cannot write the renewed kubeconfig")
	}
	before := secret.DeepCopy()
	secret.Data[m.creds.key] = data
	if err := p.hub.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("write Secret %s on the hub: %w", m.creds.secret, err)
	}
	return issued, nil
}

// boundMessage keeps an error message short enough for a condition.
func boundMessage(msg string) string {
	if len(msg) > 300 {
		return msg[:300] + "…"
	}
	return msg
}
