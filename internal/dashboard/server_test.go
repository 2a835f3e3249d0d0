package dashboard

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
)

// The hub of these tests: tokens name users, and RBAC lets alice read team-a only, admin
// everything, and admin impersonate alice.
var tokens = map[string]string{"alice-token": "alice", "admin-token": "admin"}

func allowed(spec authorizationv1.SubjectAccessReviewSpec) bool {
	a := spec.ResourceAttributes
	switch spec.User {
	case "admin":
		return true
	case "alice":
		return a.Namespace == "team-a" && a.Verb != "impersonate"
	}
	return false
}

func hubClient(t testing.TB, objs ...client.Object) client.WithWatch {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch o := obj.(type) {
			case *authenticationv1.TokenReview:
				if user, ok := tokens[o.Spec.Token]; ok {
					o.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user}}
				}
				return nil
			case *authorizationv1.SubjectAccessReview:
				o.Status.Allowed = allowed(o.Spec)
				return nil
			case *authorizationv1.SelfSubjectAccessReview:
				o.Status.Allowed = true // the kubeconfig user of local mode is an administrator
				return nil
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
}

func record(ns, owner, cluster, placement string, st flotillav1.DeliveryStatus) *flotillav1.Delivery {
	return &flotillav1.Delivery{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: owner + "-" + cluster,
			Labels: map[string]string{ledger.LabelPlacementRef: ledger.PlacementLabelValue(client.ObjectKey{Namespace: ns, Name: placement})}},
		Spec:   flotillav1.DeliverySpec{Owner: flotillav1.DeliveryOwner{APIVersion: "flotilla.dev/v1alpha1", Kind: "Propagation", Namespace: ns, Name: owner}, Cluster: cluster},
		Status: st,
	}
}

func readyStatus(kind, ns string, names ...string) flotillav1.DeliveryStatus {
	n := int32(len(names))
	return flotillav1.DeliveryStatus{Objects: []flotillav1.DeliveredObjects{{Kind: kind, Namespace: ns, Names: names}}, Count: n, Applied: n, Ready: n}
}

// testServer is a hub dashboard over a fake hub whose objects are its cache.
func testServer(t testing.TB, objs ...client.Object) (*server, client.WithWatch) {
	t.Helper()
	hub := hubClient(t, objs...)
	s := &server{opts: Options{Hub: true}, hub: hub, authz: newAuthorizer(hub, false), csrfKey: []byte("test")}
	s.authn = newAuthenticator(hub, s.authz)
	cached := map[string]bool{}
	for _, k := range cachedKinds {
		cached[k.resource] = true
	}
	s.store = &store{reader: hub, cached: cached, changed: make(chan struct{})}
	s.routes()
	return s, hub
}

func get(t *testing.T, h http.Handler, path, token string, header ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func fleetObjects() []client.Object {
	return []client.Object{
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1", Labels: map[string]string{"region": "eu-west"}}},
		&flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-2", Labels: map[string]string{"region": "us-east"}}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "europe"}},
		&flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "everywhere"}},
		record("team-a", "app-a", "spoke-1", "europe", readyStatus("/v1/ConfigMap", "team-a", "config-a")),
		record("team-b", "app-b", "spoke-1", "everywhere", readyStatus("apps/v1/Deployment", "team-b", "web-b")),
	}
}

// A viewer sees the owners, objects and Placements of the namespaces hub RBAC lets them read,
// and nothing of the others; an administrator sees both.
func TestPagesShowWhatTheViewerMayRead(t *testing.T) {
	s, _ := testServer(t, fleetObjects()...)
	h := s.handler()
	for _, path := range []string{"/owners", "/clusters/spoke-1", "/placements"} {
		code, body := get(t, h, path, "alice-token")
		if code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, code, body)
		}
		if !strings.Contains(body, "team-a") || strings.Contains(body, "team-b") {
			t.Errorf("alice's %s should name team-a and not team-b:\n%s", path, body)
		}
		if _, admin := get(t, h, path, "admin-token"); !strings.Contains(admin, "team-a") || !strings.Contains(admin, "team-b") {
			t.Errorf("admin's %s should name both teams:\n%s", path, admin)
		}
	}
	if _, body := get(t, h, "/", "alice-token"); !strings.Contains(body, "You may not list Clusters") || strings.Contains(body, "spoke-2") {
		t.Errorf("alice may not list Clusters, yet the fleet page shows:\n%s", body)
	}
	_, body := get(t, h, "/clusters/spoke-1", "admin-token")
	for _, want := range []string{"configmap team-a/config-a", "Propagation team-a/app-a", "team-a/europe", "deployment.apps team-b/web-b", "team-b/everywhere", "Ready"} {
		if !strings.Contains(body, want) {
			t.Errorf("the cluster view lacks %q:\n%s", want, body)
		}
	}
}

func TestFleetFiltersByLabel(t *testing.T) {
	s, _ := testServer(t, fleetObjects()...)
	_, body := get(t, s.handler(), "/?selector=region%3Deu-west", "admin-token")
	if !strings.Contains(body, `data-cluster="spoke-1"`) || strings.Contains(body, `data-cluster="spoke-2"`) {
		t.Errorf("filter region=eu-west:\n%s", body)
	}
}

// Requests without a token the hub accepts get the login page, and impersonation needs the
// hub's permission to impersonate.
func TestCallersMustAuthenticate(t *testing.T) {
	s, _ := testServer(t, fleetObjects()...)
	h := s.handler()
	for _, token := range []string{"", "forged"} {
		if code, body := get(t, h, "/owners", token); code != http.StatusUnauthorized || !strings.Contains(body, "Bearer token") || strings.Contains(body, "app-a") {
			t.Errorf("token %q: %d\n%s", token, code, body)
		}
	}
	if code, _ := get(t, h, "/owners", "alice-token", "Impersonate-User", "admin"); code != http.StatusUnauthorized {
		t.Errorf("alice impersonated admin: %d", code)
	}
	code, body := get(t, h, "/owners", "admin-token", "Impersonate-User", "alice")
	if code != http.StatusOK || strings.Contains(body, "team-b") || !strings.Contains(body, "Signed in as alice") {
		t.Errorf("admin impersonating alice: %d\n%s", code, body)
	}
}

// The owner page's matrix shows each object's state per cluster, a drifted one with its diff.
func TestOwnerMatrix(t *testing.T) {
	objs := fleetObjects()
	objs = append(objs,
		record("team-a", "app-a", "spoke-2", "europe", readyStatus("/v1/ConfigMap", "team-a", "config-a")),
		&flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app-a"}, Status: flotillav1.PropagationStatus{
			Conditions:     []metav1.Condition{{Type: "Applied", Status: "True", Reason: "Applied", Message: "applied everywhere"}},
			ClusterResults: []flotillav1.ClusterResult{{Cluster: "spoke-2", Drifted: 1, DriftedObjects: []flotillav1.DriftedObject{{Object: "configmap team-a/config-a"}}}},
		}})
	s, _ := testServer(t, objs...)
	_, body := get(t, s.handler(), "/owners/Propagation/team-a/app-a", "alice-token")
	for _, want := range []string{`data-state="Ready"`, `data-state="Drifted"`, "/owners/Propagation/team-a/app-a/diff/spoke-2", "applied everywhere"} {
		if !strings.Contains(body, want) {
			t.Errorf("owner page lacks %q:\n%s", want, body)
		}
	}
	if _, other := get(t, s.handler(), "/owners/Propagation/team-b/app-b", "alice-token"); !strings.Contains(other, "No such owner") || strings.Contains(other, "web-b") {
		t.Errorf("alice reads team-b's owner:\n%s", other)
	}
}

// The event stream sends a page's content, then sends it again when the cache changes.
func TestEventsSendChanges(t *testing.T) {
	s, hub := testServer(t, fleetObjects()...)
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?page=%2Fowners", nil)
	req.Header.Set("Authorization", "Bearer alice-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	first := nextEvent(t, events)
	if !strings.Contains(first, "app-a") || strings.Contains(first, "app-b") || strings.Contains(first, "<html") {
		t.Fatalf("first event:\n%s", first)
	}
	if err := hub.Create(ctx, record("team-a", "app-new", "spoke-2", "europe", readyStatus("/v1/ConfigMap", "team-a", "new"))); err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, record("team-b", "app-hidden", "spoke-2", "everywhere", readyStatus("/v1/ConfigMap", "team-b", "hidden"))); err != nil {
		t.Fatal(err)
	}
	s.store.bump()
	second := nextEvent(t, events)
	if !strings.Contains(second, "app-new") || strings.Contains(second, "app-hidden") {
		t.Fatalf("second event:\n%s", second)
	}
}

func nextEvent(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF || err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && len(data) > 0:
			return strings.Join(data, "\n")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
}

// The local dashboard answers only the browser that opened the URL it printed, with its key.
func TestLocalDashboardNeedsItsKey(t *testing.T) {
	s, _ := testServer(t, fleetObjects()...)
	s.opts.Hub, s.authz.self, s.key = false, true, "k3y"
	h := s.handler()
	for _, path := range []string{"/owners", "/owners?key=wrong", "/events?page=%2Fowners"} {
		if code, body := get(t, h, path, ""); code != http.StatusUnauthorized || strings.Contains(body, "app-a") {
			t.Errorf("%s without the key: %d\n%s", path, code, body)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/owners?key=k3y", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/owners" || len(cookies) != 1 || !cookies[0].HttpOnly {
		t.Fatalf("the key's URL: %d %v %v", rec.Code, rec.Header(), cookies)
	}
	req = httptest.NewRequest(http.MethodGet, "/owners", nil)
	req.AddCookie(cookies[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "team-b") || !strings.Contains(rec.Body.String(), "team-a") {
		t.Errorf("with the key's cookie: %d\n%s", rec.Code, rec.Body.String())
	}
}
