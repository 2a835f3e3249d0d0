package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// fakeJWT is a token whose payload names the subject and validity; the signature is not read.
func fakeJWT(t *testing.T, subject string, iat time.Time, lifetime time.Duration, serial int) string {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"sub": subject, "iat": iat.Unix(), "exp": iat.Add(lifetime).Unix(), "jti": serial})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc(payload) + "." + enc([]byte("signature"))
}

// fakeHub answers TokenRequests for the agent's account as the hub would, by the test's clock,
// and records each request's audiences and the token it was made with.
type fakeHub struct {
	t       *testing.T
	now     *time.Time
	serial  int
	calls   []string // "work" or "hub", per request
	callers []string // the bearer token of each request
	failHub bool     // refuse requests for the hub's own audience
}

func (h *fakeHub) client(token string) (kubernetes.Interface, error) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create := a.(k8stesting.CreateAction)
		if create.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := create.GetObject().(*authenticationv1.TokenRequest)
		kind := "hub"
		if len(tr.Spec.Audiences) == 1 && tr.Spec.Audiences[0] == clusterwork.Audience {
			kind = "work"
		}
		h.calls = append(h.calls, kind)
		h.callers = append(h.callers, token)
		if kind == "hub" && h.failHub {
			return true, nil, errors.New("the hub is away")
		}
		h.serial++
		lifetime := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
		out := tr.DeepCopy()
		out.Status = authenticationv1.TokenRequestStatus{
			Token:               fakeJWT(h.t, membership.AgentUser("edge"), *h.now, lifetime, h.serial),
			ExpirationTimestamp: metav1.NewTime(h.now.Add(lifetime)),
		}
		return true, out, nil
	})
	return cs, nil
}

func writeHubKubeconfig(t *testing.T, token string) string {
	t.Helper()
	kc, err := membership.AgentKubeconfig(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")}},
		"https://hub.example:6443", token)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenewalTiming drives the renewing token source by a clock of the test's: a work token is
// requested on first use and again once 80% of its hour has passed, or at once after a 401; the
// hub credential is renewed once 80% of its 24h have passed, for 24h again, written back to the
// file with mode 0600, and a failed renewal keeps the current credential in use while it is
// valid. No log line holds a token.
func TestRenewalTiming(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now := t0
	bootstrap := fakeJWT(t, membership.AgentUser("edge"), t0, 24*time.Hour, 0)
	path := writeHubKubeconfig(t, bootstrap)
	var logged strings.Builder
	log := funcr.New(func(prefix, args string) { logged.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 1})
	hub := &fakeHub{t: t, now: &now}
	r, err := newRenewingToken(context.Background(), fileStore(path), "edge", func() time.Time { return now }, log)
	if err != nil {
		t.Fatal(err)
	}
	r.newClient = hub.client
	tokens := []string{bootstrap}
	get := func(wantCalls ...string) string {
		t.Helper()
		before := len(hub.calls)
		tok, err := r.token(ctx)
		if err != nil {
			t.Fatalf("at %s: %v", now.Sub(t0), err)
		}
		if got := hub.calls[before:]; strings.Join(got, ",") != strings.Join(wantCalls, ",") {
			t.Fatalf("at %s: requests %v, want %v", now.Sub(t0), got, wantCalls)
		}
		tokens = append(tokens, tok)
		return tok
	}

	first := get("work")
	if hub.callers[0] != bootstrap {
		t.Fatal("the work token was not requested with the bootstrap credential")
	}
	if got := get(); got != first {
		t.Fatal("a fresh work token was replaced")
	}
	now = t0.Add(47 * time.Minute) // 78% of the work token's hour
	get()
	now = t0.Add(48 * time.Minute) // 80%
	second := get("work")
	if second == first {
		t.Fatal("the work token was not renewed at 80% of its life")
	}
	if !r.refused() {
		t.Fatal("a refused work token may not be replaced")
	}
	third := get("work") // at once after a 401
	if third == second {
		t.Fatal("the refused work token was used again")
	}

	// The hub credential: kept until 80% of its 24h (19h12m), then renewed for 24h again.
	now = t0.Add(19*time.Hour + 11*time.Minute)
	get("work")
	now = t0.Add(19*time.Hour + 12*time.Minute)
	get("hub") // the work token of a minute ago stays
	renewed := r.hub.token
	r.refused()
	get("work")
	if renewed == bootstrap || hub.callers[len(hub.callers)-1] != renewed {
		t.Fatal("the work token was not requested with the renewed credential")
	}
	if got := r.hub.expires.Sub(r.hub.issued); got != 24*time.Hour {
		t.Fatalf("the credential was renewed for %s, want 24h", got)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("the kubeconfig was written with mode %v", info.Mode().Perm())
	}
	again, err := newRenewingToken(context.Background(), fileStore(path), "edge", func() time.Time { return now }, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if again.hub.token != renewed {
		t.Fatal("a restarted agent would not read the renewed credential")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left beside the kubeconfig: %d entries", len(entries))
	}

	// A failed renewal while the credential is valid: the current one stays in use, and the
	// renewal is tried again after renewRetry, not on every request.
	hub.failHub = true
	now = now.Add(20 * time.Hour) // 20h into the renewed credential's 24h
	r.refused()
	get("hub", "work")
	if hub.callers[len(hub.callers)-1] != renewed {
		t.Fatal("after a failed renewal the work token was not requested with the current credential")
	}
	r.refused()
	get("work") // within renewRetry: the renewal is not tried again
	now = now.Add(renewRetry)
	hub.failHub = false
	r.refused()
	get("hub", "work")

	// Expired and not renewable: an error, and nothing sent.
	hub.failHub = true
	now = r.hub.expires.Add(time.Minute)
	r.refused()
	if _, err := r.token(ctx); err == nil {
		t.Fatal("an expired credential that could not be renewed gave a token")
	}

	for _, tok := range tokens {
		if tok != "" && strings.Contains(logged.String(), tok) {
			t.Fatal("a token was logged")
		}
	}
	if !strings.Contains(logged.String(), "Renewed the hub credential") {
		t.Fatalf("the renewal was not logged:\n%s", logged.String())
	}
}

// TestRenewingTokenRefusesAnotherIdentity: a hub kubeconfig whose token is not this cluster's
// agent is refused at start.
func TestRenewingTokenRefusesAnotherIdentity(t *testing.T) {
	now := time.Now()
	path := writeHubKubeconfig(t, fakeJWT(t, membership.AgentUser("other"), now, time.Hour, 0))
	if _, err := newRenewingToken(context.Background(), fileStore(path), "edge", time.Now, logr.Discard()); err == nil || !strings.Contains(err.Error(), "agent-edge") {
		t.Fatalf("another cluster's credential: %v", err)
	}
	path = writeHubKubeconfig(t, "not-a-jwt")
	if _, err := newRenewingToken(context.Background(), fileStore(path), "edge", time.Now, logr.Discard()); err == nil {
		t.Fatal("a token that is not a ServiceAccount token was taken")
	}
}

func TestRenewAt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		lifetime, want time.Duration
	}{{time.Hour, 48 * time.Minute}, {24 * time.Hour, 19*time.Hour + 12*time.Minute}, {10 * time.Minute, 8 * time.Minute}} {
		if got := renewAt(t0, t0.Add(tc.lifetime)).Sub(t0); got != tc.want {
			t.Errorf("renewAt for %s = %s, want %s", tc.lifetime, got, tc.want)
		}
	}
}

// stubTokens hands out "t1", "t2"... and counts refusals.
type stubTokens struct {
	n, refusals int
}

func (s *stubTokens) token(context.Context) (string, error) {
	if s.n == 0 {
		s.n = 1
	}
	return "t" + string(rune('0'+s.n)), nil
}

func (s *stubTokens) refused() bool { s.refusals++; s.n++; return true }

// TestRefusedTokenIsReplacedAtOnce: a 401 from the work endpoint makes the client take a new
// token and ask once more in the same call; a second 401 is the answer.
func TestRefusedTokenIsReplacedAtOnce(t *testing.T) {
	var seen []string
	accept := "Bearer t2"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != accept {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(clusterwork.Work{Cluster: "edge"})
	}))
	defer srv.Close()
	c, err := newHubClient(srv.URL, "edge", "", "")
	if err != nil {
		t.Fatal(err)
	}
	tokens := &stubTokens{}
	c.tokens = tokens
	if _, _, _, err := c.work(context.Background(), "", 0); err != nil {
		t.Fatalf("the request with the replaced token failed: %v (sent %v)", err, seen)
	}
	if strings.Join(seen, ",") != "Bearer t1,Bearer t2" || tokens.refusals != 1 {
		t.Fatalf("sent %v with %d refusals, want t1 then t2", seen, tokens.refusals)
	}
	accept, seen = "none", nil
	if _, _, _, err := c.work(context.Background(), "", 0); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("two refusals in a row: %v", err)
	}
	if len(seen) != 2 {
		t.Fatalf("asked %d times, want 2 (one retry)", len(seen))
	}
}
