package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/kubeconfig"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// Token renewal. With a hub kubeconfig (Options.HubKubeconfig, written by `flotilla join --mode
// pull`), the agent holds a credential for the hub API server: a token of its own
// ServiceAccount, which may create tokens for that account and nothing else. With it, it
// requests the short-lived tokens it shows the work endpoint (audience clusterwork.Audience,
// WorkTokenLifetime), and renews the credential itself; both are renewed once RenewFraction of
// their life has passed, and a work token the endpoint refuses (401) at once. A renewed
// credential is written back to the kubeconfig file (a temporary file renamed over it), so an
// agent restarted later starts with a valid one. No token is ever logged.

// WorkTokenLifetime is how long each work token the agent requests is valid.
const WorkTokenLifetime = time.Hour

// RenewFraction is the part of a token's life after which the agent renews it.
const RenewFraction = 0.8

// minTokenLifetime is the shortest lifetime the API server issues.
const minTokenLifetime = 10 * time.Minute

// renewRetry is how long the agent waits after a failed renewal before it tries again.
const renewRetry = 10 * time.Second

// renewAt is when a token valid from issued to expires is to be renewed: once RenewFraction of
// its life has passed.
func renewAt(issued, expires time.Time) time.Time {
	return issued.Add(time.Duration(float64(expires.Sub(issued)) * RenewFraction))
}

// tokenSource gives the bearer token for the work endpoint.
type tokenSource interface {
	// token returns the token to send.
	token(ctx context.Context) (string, error)
	// refused says the endpoint answered 401 to that token; it reports whether a new token
	// may be tried at once.
	refused() bool
}

// fileToken reads the token from a file for every request (a projected, rotated token).
type fileToken string

func (f fileToken) token(context.Context) (string, error) {
	b, err := os.ReadFile(string(f))
	if err != nil {
		return "", fmt.Errorf("read the agent's token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("the token file %s is empty", string(f))
	}
	return t, nil
}

func (fileToken) refused() bool { return false }

// noToken is the token source of an agent in the hub's own process (Options.InProcess): its
// requests carry no token.
type noToken struct{}

func (noToken) token(context.Context) (string, error) { return "", nil }
func (noToken) refused() bool                         { return false }

// issued is a token and its validity, by the agent's clock.
type issued struct {
	token            string
	issued, expires  time.Time
	unknownLifetime  bool // the token's claims do not say: it is not renewed ahead of time
	renewAfterFailed time.Time
}

func (t issued) due(now time.Time) bool {
	return t.token == "" || !t.unknownLifetime && !now.Before(renewAt(t.issued, t.expires))
}

// renewingToken is the tokenSource of an agent with a hub kubeconfig.
type renewingToken struct {
	store   credentialStore // where the hub kubeconfig is kept
	account string          // the agent's ServiceAccount name, from the credential
	ns      string
	now     func() time.Time
	log     logr.Logger
	// newClient builds a client of the hub API server acting with token (tests may count calls).
	newClient func(token string) (kubernetes.Interface, error)

	mu   sync.Mutex
	raw  *clientcmdapi.Config // the file's content, its token renewed in place
	user string               // the auth entry the current context uses
	hub  issued               // the credential for the hub API server
	work issued               // the token for the work endpoint
	// renewFailed is why the last renewal of the credential failed ("" if it did not).
	renewFailed string
}

// newRenewingToken reads the hub kubeconfig from store. It must be self-contained (a token, the
// CA inline: package kubeconfig's rules) and hold a token of cluster's agent.
func newRenewingToken(ctx context.Context, store credentialStore, cluster string, now func() time.Time, log logr.Logger) (*renewingToken, error) {
	data, err := store.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the hub kubeconfig: %w", err)
	}
	path := store.String()
	cfg, err := kubeconfig.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the hub kubeconfig %s: %w", path, err)
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("the hub kubeconfig %s: %w", path, err)
	}
	user := ""
	if c := raw.Contexts[raw.CurrentContext]; c != nil {
		user = c.AuthInfo
	} else {
		for _, c := range raw.Contexts {
			user = c.AuthInfo
		}
	}
	if raw.AuthInfos[user] == nil || cfg.BearerToken == "" {
		return nil, fmt.Errorf("the hub kubeconfig %s holds no token (`flotilla join NAME --mode pull` writes one)", path)
	}
	claims, err := readClaims(cfg.BearerToken)
	if err != nil {
		return nil, fmt.Errorf("the hub kubeconfig %s: its token is not a ServiceAccount token: %w", path, err)
	}
	ns, name, err := serviceaccount.SplitUsername(claims.Subject)
	if err != nil {
		return nil, fmt.Errorf("the hub kubeconfig %s: its token is not a ServiceAccount token: %w", path, err)
	}
	if ns != membership.Namespace || name != membership.AgentServiceAccount(cluster) {
		return nil, fmt.Errorf("the hub kubeconfig %s acts as %s, not as cluster %s's agent (%s): is it another cluster's? "+
			"`flotilla join %s --mode pull` writes this cluster's", path, claims.Subject, cluster, membership.AgentUser(cluster), cluster)
	}
	base := rest.AnonymousClientConfig(cfg)
	r := &renewingToken{store: store, account: name, ns: ns, now: now, log: log, raw: raw, user: user,
		hub: claims.validity(cfg.BearerToken)}
	r.newClient = func(token string) (kubernetes.Interface, error) {
		c := rest.CopyConfig(base)
		c.BearerToken = token
		c.UserAgent = UserAgent
		return kubernetes.NewForConfig(c)
	}
	if r.hub.unknownLifetime {
		log.Info("The hub credential does not say when it expires: it is not renewed ahead of time", "kubeconfig", path)
	}
	return r, nil
}

// identity is the hub user the credential acts as.
func (r *renewingToken) identity() string { return serviceaccount.MakeUsername(r.ns, r.account) }

func (r *renewingToken) token(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The lock is held while the hub is asked: a hub that takes the connection and never
	// answers must not stall every request of the agent.
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	now := r.now()
	if r.hub.due(now) && !now.Before(r.hub.renewAfterFailed) {
		if err := r.renewHub(ctx, now); err != nil {
			r.hub.renewAfterFailed = now.Add(renewRetry)
			if !now.Before(r.hub.expires) && !r.hub.unknownLifetime {
				return "", err
			}
			// The credential is still valid: use it, and try again later (said once per reason).
			if err.Error() != r.renewFailed {
				r.log.Info("Renewing the hub credential failed; the current one stays in use until it expires, and renewal is tried again",
					"expires", r.hub.expires.UTC().Format(time.RFC3339), "retry", renewRetry, "reason", err.Error())
			}
			r.renewFailed = err.Error()
		} else {
			r.renewFailed = ""
		}
	}
	if r.work.due(now) {
		if now.Before(r.work.renewAfterFailed) {
			return "", fmt.Errorf("no token for the hub's work endpoint: the last request for one failed; trying again at %s",
				r.work.renewAfterFailed.UTC().Format(time.RFC3339))
		}
		if err := r.renewWork(ctx, now); err != nil {
			r.work = issued{renewAfterFailed: now.Add(renewRetry)}
			return "", err
		}
	}
	return r.work.token, nil
}

// refused drops the work token the endpoint refused; the next request gets a new one.
func (r *renewingToken) refused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.work.token == "" {
		return false
	}
	r.work = issued{}
	return true
}

// request asks the hub API server, with the current credential, for a token of the agent's own
// ServiceAccount.
func (r *renewingToken) request(ctx context.Context, lifetime time.Duration, audiences []string) (string, time.Duration, error) {
	cs, err := r.newClient(r.hub.token)
	if err != nil {
		return "", 0, err
	}
	seconds := int64(max(lifetime, minTokenLifetime) / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(r.ns).CreateToken(ctx, r.account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("request a token for %s from the hub: %w", r.identity(), err)
	}
	got := time.Duration(seconds) * time.Second
	if c, err := readClaims(tr.Status.Token); err == nil && c.Expiry > c.IssuedAt {
		got = time.Duration(c.Expiry-c.IssuedAt) * time.Second // what the hub granted
	}
	return tr.Status.Token, got, nil
}

func (r *renewingToken) renewWork(ctx context.Context, now time.Time) error {
	token, lifetime, err := r.request(ctx, WorkTokenLifetime, []string{clusterwork.Audience})
	if err != nil {
		return err
	}
	r.work = issued{token: token, issued: now, expires: now.Add(lifetime)}
	r.log.V(1).Info("Requested a token for the hub's work endpoint", "validFor", lifetime)
	return nil
}

// renewHub requests a new credential for as long as the current one was issued for, and writes
// it back to the kubeconfig file.
func (r *renewingToken) renewHub(ctx context.Context, now time.Time) error {
	token, lifetime, err := r.request(ctx, r.hub.expires.Sub(r.hub.issued), nil)
	if err != nil {
		return err
	}
	r.raw.AuthInfos[r.user].Token = token
	data, err := clientcmd.Write(*r.raw)
	if err == nil {
		err = r.store.save(ctx, data)
	}
	if err != nil {
		// The new credential is kept in memory; the store still has the old one.
		r.log.Info("The renewed hub credential could not be written back: a restarted agent starts with the previous one",
			"kubeconfig", r.store.String(), "reason", err.Error())
	}
	r.hub = issued{token: token, issued: now, expires: now.Add(lifetime)}
	r.log.Info("Renewed the hub credential", "kubeconfig", r.store.String(), "expires", r.hub.expires.UTC().Format(time.RFC3339))
	return nil
}

// claims are the parts of a ServiceAccount token's payload renewal reads. The agent reads its
// own tokens' claims without checking their signature: the hub checks them.
type claims struct {
	Subject  string `json:"sub"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
}

// readClaims decodes a JWT's payload.
func readClaims(token string) (claims, error) {
	var c claims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.New("not a JSON Web Token")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, fmt.Errorf("its payload does not decode: %w", err)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, fmt.Errorf("its payload does not decode: %w", err)
	}
	return c, nil
}

// validity is the token's validity from its own claims.
func (c claims) validity(token string) issued {
	if c.IssuedAt == 0 || c.Expiry <= c.IssuedAt {
		return issued{token: token, unknownLifetime: true}
	}
	return issued{token: token, issued: time.Unix(c.IssuedAt, 0), expires: time.Unix(c.Expiry, 0)}
}
