package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

func waitingOwner() []client.Object {
	objs := fleetObjects()
	objs[2].(*flotillav1.Placement).Spec.Rollout = &flotillav1.RolloutPolicy{Stages: []flotillav1.RolloutStage{
		{Name: "canary", ClusterNames: []string{"spoke-1"}}, {Name: "prod", ClusterNames: []string{"spoke-2"}, Approval: flotillav1.ApprovalRequired}}}
	return append(objs, &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app-a"}, Status: flotillav1.PropagationStatus{
		Rollout: &flotillav1.RolloutStatus{Revision: "app-a-7d9f", Phase: flotillav1.RolloutWaitingForApproval, Message: "stage prod waits for approval",
			Stages: []flotillav1.RolloutStageStatus{{Name: "canary", Clusters: 1, Done: 1}, {Name: "prod", Clusters: 1, Pending: 1}}},
	}})
}

// The owner and Placement views show the rollout, stage by stage, with an Approve button for
// the stage that waits.
func TestRolloutViews(t *testing.T) {
	s, _ := testServer(t, waitingOwner()...)
	h := s.handler()
	for _, path := range []string{"/owners/Propagation/team-a/app-a", "/placements/team-a/europe"} {
		_, body := get(t, h, path, "alice-token")
		for _, want := range []string{`data-phase="WaitingForApproval"`, "stage prod waits for approval", `<tr data-stage="canary">`, "Approve prod",
			`action="/owners/Propagation/team-a/app-a/approve"`, `name="revision" value="app-a-7d9f"`, `name="return" value="` + path + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", path, want, body)
			}
		}
	}
	if _, body := get(t, h, "/placements/team-a/europe", "alice-token"); !strings.Contains(body, "Rollout policy") || !strings.Contains(body, "clusters spoke-2") {
		t.Errorf("the Placement view lacks its rollout policy:\n%s", body)
	}
}

// An approval is a POST from the dashboard's own page with the session's token; it sets the
// annotation for the stage and revision, and anything else is refused.
func TestApproveNeedsOriginAndToken(t *testing.T) {
	s, hub := testServer(t, waitingOwner()...)
	s.opts.Hub, s.authz.self, s.key = false, true, "k3y"
	h := s.handler()
	session := &http.Cookie{Name: keyCookie, Value: "k3y"}
	req := httptest.NewRequest(http.MethodGet, "/owners/Propagation/team-a/app-a", nil)
	req.AddCookie(session)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no approval form:\n%s", rec.Body.String())
	}
	post := func(origin, token string) int {
		form := url.Values{"csrf": {token}, "stage": {"prod"}, "revision": {"app-a-7d9f"}, "return": {"/placements/team-a/europe"}}
		req := httptest.NewRequest(http.MethodPost, "/owners/Propagation/team-a/app-a/approve", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.AddCookie(session)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	approved := func() string {
		p := &flotillav1.Propagation{}
		if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "app-a"}, p); err != nil {
			t.Fatal(err)
		}
		return p.Annotations[flotillav1.AnnotationApprove]
	}
	for _, c := range []struct{ origin, token string }{{"", m[1]}, {"http://evil.example", m[1]}, {"http://example.com", "forged"}, {"http://example.com", ""}} {
		if code := post(c.origin, c.token); code != http.StatusForbidden || approved() != "" {
			t.Errorf("origin %q, token %q: %d, annotation %q", c.origin, c.token, code, approved())
		}
	}
	if code := post("http://example.com", m[1]); code != http.StatusSeeOther || approved() != "prod@app-a-7d9f" {
		t.Errorf("the approval: %d, annotation %q", code, approved())
	}
}
