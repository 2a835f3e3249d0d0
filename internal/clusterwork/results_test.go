package clusterwork

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// reporter records what the handler would have the ledger write.
type reporter struct{ wrote []string }

func (r *reporter) WriteReported(_ context.Context, owner render.Owner, cluster string, _ flotillav1.DeliveryStatus) error {
	r.wrote = append(r.wrote, owner.String()+"@"+cluster)
	return nil
}

// TestResults: who may post results for which records. Another cluster's agent and the hub's
// admin are refused; a result for another cluster's record, a forged record, a stale revision
// or negative counts is skipped and nothing is written; an oversized body is refused unread.
func TestResults(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	withWork := func(rec *flotillav1.Delivery, digest string) *flotillav1.Delivery {
		rec.Spec.Work = &flotillav1.DeliveryWork{Revision: "web-1", Digest: digest}
		return rec
	}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner,
		withWork(record("propagation.web.a", "a", owner, "owner-uid"), "d2"),
		withWork(record("forged", "a", owner, "someone-elses-uid"), "d2"),
		withWork(record("propagation.web.b", "b", owner, "owner-uid"), "d2"),
	).Build()
	rep := &reporter{}
	notified := 0
	h := &Handler{
		Hub: hub,
		Owners: ledger.Owners{schema.GroupKind{Group: flotillav1.GroupVersion.Group, Kind: "Propagation"}: {
			New: func() client.Object { return &flotillav1.Propagation{} }}},
		Revisions:     &revisions.Store{Reader: hub},
		Authenticator: tokens(map[string]string{"a": membership.AgentUser("a"), "b": membership.AgentUser("b"), "admin": "kubernetes-admin"}),
		Accounts:      agentAccounts(),
		Reports:       rep,
		Notify:        func(render.Owner) { notified++ },
	}
	srv := httptest.NewServer(h.Routes())
	defer srv.Close()
	post := func(cluster, token string, body []byte) (int, Written) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/clusters/"+cluster+"/results", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var w Written
		_ = json.NewDecoder(res.Body).Decode(&w)
		return res.StatusCode, w
	}
	results := func(items ...Result) []byte {
		b, _ := json.Marshal(Results{Items: items})
		return b
	}
	good := Result{Record: "team/propagation.web.a", Revision: "d2", Complete: true, Applied: 1, Ready: 1}
	for _, c := range []struct {
		name, cluster, token string
		status               int
	}{
		{"another cluster's agent", "a", "b", http.StatusForbidden},
		{"the hub's admin", "a", "admin", http.StatusForbidden},
		{"an unknown token", "a", "nobody", http.StatusUnauthorized},
		{"not a cluster name", "A_", "a", http.StatusBadRequest},
	} {
		if status, _ := post(c.cluster, c.token, results(good)); status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, status, c.status)
		}
	}
	stale := good
	stale.Revision = "d1"
	negative := good
	negative.Applied = -1
	othersRecord := good
	othersRecord.Record = "team/propagation.web.b"
	forged := good
	forged.Record = "team/forged"
	for _, c := range []struct {
		name string
		res  Result
		why  string
	}{
		{"a stale revision", stale, "stale"},
		{"negative counts", negative, "negative"},
		{"another cluster's record", othersRecord, "not a Delivery record the hub trusts for cluster a"},
		{"a record the ledger did not write", forged, "not a Delivery record the hub trusts for cluster a"},
	} {
		status, w := post("a", "a", results(c.res))
		if status != http.StatusOK || w.Written != 0 || !strings.HasPrefix(w.Skipped[c.res.Record], c.why) {
			t.Errorf("%s: status %d, %+v", c.name, status, w)
		}
	}
	// The record's work cannot be resolved here (no revision stored): nothing is written,
	// and the agent is told to post again.
	if status, w := post("a", "a", results(good)); status != http.StatusServiceUnavailable || w.Written != 0 {
		t.Errorf("unresolvable work: status %d, %+v", status, w)
	}
	if status, _ := post("a", "a", bytes.Repeat([]byte(" "), MaxResultsBytes+1)); status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d", status)
	}
	if status, _ := post("a", "a", []byte("{not json")); status != http.StatusBadRequest {
		t.Errorf("not JSON: status %d", status)
	}
	if len(rep.wrote) != 0 || notified != 0 {
		t.Errorf("written %v, notified %d: nothing should be", rep.wrote, notified)
	}
}

// TestReportedReason: a result that is not complete carries its reason into the record when
// it is one CamelCase word; a complete one, or anything else an agent posts, carries none, and
// what was served stays the record's status.revision.
func TestReportedReason(t *testing.T) {
	prev := flotillav1.DeliveryStatus{Revision: "d1", Reason: "SchemaNotFound"}
	for _, c := range []struct {
		name string
		res  Result
		want string
	}{
		{"a compile failure", Result{Revision: "d2", Reason: "SchemaNotFound", Message: "no Gadget"}, "SchemaNotFound"},
		{"not a word", Result{Revision: "d2", Reason: "Schema not found; rm -rf"}, ""},
		{"too long", Result{Revision: "d2", Reason: "A" + strings.Repeat("b", 64)}, ""},
		{"complete", Result{Revision: "d2", Complete: true, Reason: "CompileFailed"}, ""},
		{"no reason", Result{Revision: "d2", Message: "apply failed"}, ""},
	} {
		got := c.res.status(prev, nil)
		if got.Reason != c.want {
			t.Errorf("%s: reason %q, want %q", c.name, got.Reason, c.want)
		}
		if want := map[bool]string{true: "d2", false: "d1"}[c.res.Complete]; got.Revision != want {
			t.Errorf("%s: revision %q, want %q", c.name, got.Revision, want)
		}
	}
}
