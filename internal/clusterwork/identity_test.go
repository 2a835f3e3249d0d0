package clusterwork

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/membership"
)

// TestAgentAccountMustBeJoins: a token named for cluster a's agent is served only when the
// account is the one join made (labelled for a) and the token's UID is that account's: an
// account made by hand without the label, and a token of an account deleted and made again,
// are refused 403 with what to do.
func TestAgentAccountMustBeJoins(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner).WithObjects(protected(t)...).Build()
	account := func(label string, uid types.UID) client.Reader {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: membership.AgentServiceAccount("a"), Namespace: membership.Namespace, UID: uid}}
		if label != "" {
			sa.Labels = map[string]string{flotillav1.LabelCluster: label}
		}
		return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(sa).Build()
	}
	joined := types.UID(agentUID(membership.AgentUser("a")))
	for _, tc := range []struct {
		name     string
		accounts client.Reader
		status   int
		says     string
	}{
		{"joined", account("a", joined), http.StatusOK, ""},
		{"made by hand", account("", joined), http.StatusForbidden, "join the cluster again"},
		{"labelled for another cluster", account("b", joined), http.StatusForbidden, "lacks the label"},
		{"made again since the token", account("a", "another-uid"), http.StatusForbidden, "issue a new one"},
		{"missing", fake.NewClientBuilder().WithScheme(install.Scheme()).Build(), http.StatusForbidden, "is missing"},
	} {
		get := serve(t, &Handler{Hub: hub, Policies: hub, Accounts: tc.accounts})
		res, _, body := get("a", "a", "")
		if res.StatusCode != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s: status %d (%s), want %d saying %q", tc.name, res.StatusCode, strings.TrimSpace(body), tc.status, tc.says)
		}
	}
}

// TestRequestsBeyondTheLimitWaitTheirTurn: with MaxInFlight requests being served, one more is
// answered 429 with Retry-After, before its token is reviewed; once they finish it is served.
func TestRequestsBeyondTheLimitWaitTheirTurn(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(protected(t)...).Build()
	release, entered := make(chan struct{}), make(chan struct{}, 2)
	var reviews sync.Map
	slow := authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		reviews.Store(r.Header.Get("X-Request"), true)
		if r.Header.Get("X-Request") != "last" {
			entered <- struct{}{}
			<-release
		}
		name := membership.AgentUser("a")
		return &authenticator.Response{User: &user.DefaultInfo{Name: name, UID: agentUID(name)}}, true, nil
	})
	h := &Handler{Hub: hub, Policies: hub, Accounts: agentAccounts(), Authenticator: slow, MaxInFlight: 2}
	srv := httptest.NewServer(h.Routes())
	defer srv.Close()
	ask := func(id string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/clusters/a/work", nil)
		req.Header.Set("Authorization", "Bearer a")
		req.Header.Set("X-Request", id)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		res.Body.Close()
		return res
	}
	var wg sync.WaitGroup
	for _, id := range []string{"first", "second"} {
		wg.Add(1)
		go func() { defer wg.Done(); ask(id) }()
	}
	<-entered
	<-entered
	res := ask("over")
	if res == nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("a request over the limit: %v, want 429 with Retry-After", res)
	}
	if _, reviewed := reviews.Load("over"); reviewed {
		t.Error("a request over the limit cost a token review")
	}
	close(release)
	wg.Wait()
	if res := ask("last"); res == nil || res.StatusCode != http.StatusOK {
		t.Fatalf("a request once the others finished: %v, want 200", res)
	}
}
