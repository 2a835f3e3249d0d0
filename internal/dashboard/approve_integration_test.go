package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// approvalHub is a real hub API server with Flotilla's kinds, two teams' Propagations whose
// rollouts wait for approval of their prod stage, and the users of the test: approver may patch
// team-a's Propagations, reader may only read them, and the three attackers (fleettest).
// Callers reach the hub's dashboard as the ServiceAccount "front", which may impersonate them.
type approvalHub struct {
	hub   *localfleet.Plane
	admin client.Client
	url   string
	srv   *server
	token string // front's
}

func startApprovalHub(t *testing.T) *approvalHub {
	fleet := fleettest.Start(t, localfleet.PlaneSpec{Name: "hub", Role: localfleet.RoleHub, AuditLog: true})
	ctx := t.Context()
	cfg := fleet.Hub().RESTConfig()
	if err := install.ApplyForSelf(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	create := func(objs ...client.Object) {
		for _, o := range objs {
			if err := admin.Create(ctx, o); err != nil {
				t.Fatalf("create %T %s: %v", o, o.GetName(), err)
			}
		}
	}
	read := []string{"get", "list", "watch"}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "front"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "front"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users", "groups"}, Verbs: []string{"impersonate"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "front"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "front"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "front"}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "approver"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{flotillav1.GroupVersion.Group}, Resources: []string{"propagations", "deliveries"}, Verbs: append(read, "patch")}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{flotillav1.GroupVersion.Group}, Resources: []string{"propagations", "deliveries"}, Verbs: read}}},
	)
	for _, user := range []string{"approver", "reader"} {
		create(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: user}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})
	}
	fleettest.Grant(t, ctx, admin, "team-a", fleettest.Viewer, "view")
	fleettest.Grant(t, ctx, admin, "team-a", fleettest.Tenant, "edit")
	for _, ns := range []string{"team-a", "team-b"} {
		p := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Spec: flotillav1.PropagationSpec{
			PlacementRef:      flotillav1.PlacementRef{Name: "all"},
			ResourceSelectors: []flotillav1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}}}}
		create(p)
		p.Status.Rollout = &flotillav1.RolloutStatus{Revision: "app-v2", Phase: flotillav1.RolloutWaitingForApproval, Message: "stage prod waits for approval",
			Stages: []flotillav1.RolloutStageStatus{{Name: "canary", Clusters: 1, Done: 1}, {Name: "prod", Clusters: 2, Pending: 2}}}
		if err := admin.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "front", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(ctx, cfg, Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(srv.handler())
	t.Cleanup(web.Close)
	return &approvalHub{hub: fleet.Hub(), admin: admin, url: web.URL, srv: srv, token: tok.Status.Token}
}

// request sends a request to the dashboard as user (through front's impersonation).
func (h *approvalHub) request(t *testing.T, method, path, user string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, h.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set("Impersonate-User", user)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", h.url)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// approval is a valid approval form of user's session: the attackers get a valid token too, so
// what refuses them is their access, not the token.
func (h *approvalHub) approval(user string) url.Values {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Authorization", "Bearer "+h.token)
	r.Header.Set("Impersonate-User", user)
	return url.Values{"csrf": {h.srv.csrfToken(r)}, "stage": {"prod"}, "revision": {"app-v2"}}
}

func (h *approvalHub) approved(t *testing.T, ns string) string {
	t.Helper()
	p := &flotillav1.Propagation{}
	if err := h.admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app"}, p); err != nil {
		t.Fatal(err)
	}
	return p.Annotations[flotillav1.AnnotationApprove]
}

// Only a caller the hub lets patch the owner sees the Approve button and can approve, and the
// approval is written with the caller's identity, never the dashboard's.
func TestApprovalAsTheCaller(t *testing.T) {
	h := startApprovalHub(t)
	page := "/owners/Propagation/team-a/app"
	fleettest.Eventually(t, 30*time.Second, "the dashboard's cache has the rollouts", func() error {
		if _, body := h.request(t, http.MethodGet, page, "approver", nil); !strings.Contains(body, "Approve prod") {
			return fmt.Errorf("approver's page has no Approve button:\n%s", body)
		}
		return nil
	})
	if _, body := h.request(t, http.MethodGet, page, "reader", nil); !strings.Contains(body, "WaitingForApproval") || strings.Contains(body, "Approve prod") {
		t.Errorf("reader should see the rollout and no Approve button:\n%s", body)
	}
	for _, user := range []string{fleettest.Viewer, fleettest.Tenant, fleettest.SpokeUser} {
		if _, body := h.request(t, http.MethodGet, page, user, nil); strings.Contains(body, "Approve prod") || strings.Contains(body, "app-v2") {
			t.Errorf("%s sees the rollout or its button:\n%s", user, body)
		}
	}
	for _, c := range []struct{ user, ns string }{
		{"reader", "team-a"}, {fleettest.Viewer, "team-a"}, {fleettest.Tenant, "team-a"}, {fleettest.SpokeUser, "team-a"}, {"approver", "team-b"},
	} {
		if code, body := h.request(t, http.MethodPost, "/owners/Propagation/"+c.ns+"/app/approve", c.user, h.approval(c.user)); code != http.StatusForbidden {
			t.Errorf("%s approving in %s: %d %s", c.user, c.ns, code, body)
		}
		if got := h.approved(t, c.ns); got != "" {
			t.Fatalf("%s approved %s's rollout: %q", c.user, c.ns, got)
		}
	}
	if code, _ := h.request(t, http.MethodPost, page+"/approve", "", h.approval("approver")); code != http.StatusUnauthorized {
		t.Errorf("an approval without a token: %d", code)
	}
	if code, body := h.request(t, http.MethodPost, page+"/approve", "approver", h.approval("approver")); code != http.StatusSeeOther {
		t.Fatalf("approver's approval: %d %s", code, body)
	}
	if got := h.approved(t, "team-a"); got != "prod@app-v2" {
		t.Fatalf("approver's approval set %q", got)
	}
	events, err := h.hub.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	patches := 0
	for _, ev := range events {
		if ev.Verb != "patch" || ev.ObjectRef.Resource != "propagations" {
			continue
		}
		patches++
		if ev.User.Username != "system:serviceaccount:default:front" || ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != "approver" {
			t.Errorf("a Propagation was patched as %s impersonating %v", ev.User.Username, ev.ImpersonatedUser)
		}
	}
	if patches != 1 {
		t.Errorf("%d patches of Propagations, want the one approval", patches)
	}
}
