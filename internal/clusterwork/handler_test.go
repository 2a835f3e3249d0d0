package clusterwork

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/membership"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
	"github.com/flotilla-dev/flotilla/internal/work"
)

// tokens stands in for the hub's TokenReview: each token is one user, accepted only when the
// review asks for Audience (as the delegating authenticator does, from the request context).
// An agent's token carries its account's UID, as a ServiceAccount token's review does
// (agentUID).
func tokens(users map[string]string) authenticator.Request {
	return authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		name, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if auds, _ := authenticator.AudiencesFrom(r.Context()); !ok || !auds.Has(Audience) {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: name, UID: agentUID(name)}}, true, nil
	})
}

// agentUID is the UID of the agent account named by user in these tests.
func agentUID(user string) string { return "uid-of-" + user }

// agentAccounts are the agent accounts of clusters a and b as join makes them.
func agentAccounts() client.Reader {
	var objs []client.Object
	for _, c := range []string{"a", "b"} {
		objs = append(objs, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
			Name: membership.AgentServiceAccount(c), Namespace: membership.Namespace,
			UID: types.UID(agentUID(membership.AgentUser(c))), Labels: map[string]string{flotillav1.LabelCluster: c}}})
	}
	return fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(objs...).Build()
}

func record(name, cluster string, owner *flotillav1.Propagation, uid string) *flotillav1.Delivery {
	return &flotillav1.Delivery{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.Namespace, Labels: map[string]string{flotillav1.LabelCluster: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Name: owner.Name, UID: types.UID(uid)}}},
		Spec: flotillav1.DeliverySpec{Cluster: cluster, Owner: flotillav1.DeliveryOwner{APIVersion: flotillav1.GroupVersion.String(),
			Kind: "Propagation", Namespace: owner.Namespace, Name: owner.Name}},
	}
}

// protected are the Delivery policy and its binding, as `flotilla install` makes them.
func protected(t *testing.T) []client.Object {
	t.Helper()
	policy, binding, err := install.DeliveryPolicy(install.DefaultController)
	if err != nil {
		t.Fatal(err)
	}
	return []client.Object{policy, binding}
}

// serve serves h and returns a function that asks it for cluster's work with a token and an
// If-None-Match header (each may be empty): the response, the work it holds and its body.
func serve(t *testing.T, h *Handler) func(cluster, token, etag string) (*http.Response, Work, string) {
	t.Helper()
	if h.Owners == nil {
		h.Owners = ledger.Owners{schema.GroupKind{Group: flotillav1.GroupVersion.Group, Kind: "Propagation"}: {
			New: func() client.Object { return &flotillav1.Propagation{} }}}
	}
	if h.Authenticator == nil {
		h.Authenticator = tokens(map[string]string{"a": membership.AgentUser("a"), "b": membership.AgentUser("b"), "admin": "kubernetes-admin"})
	}
	if h.Accounts == nil {
		h.Accounts = agentAccounts()
	}
	srv := httptest.NewServer(h.Routes())
	t.Cleanup(srv.Close)
	return func(cluster, token, etag string) (*http.Response, Work, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/clusters/"+cluster+"/work", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		var w Work
		if res.StatusCode == http.StatusOK {
			if err := json.Unmarshal(body, &w); err != nil {
				t.Fatal(err)
			}
		}
		return res, w, string(body)
	}
}

// TestHandler: who is served what, without API servers. A record without work yet is listed
// as pending; a record the ledger did not write (another UID), and another cluster's, are not
// served; the ETag answers 304 until a record's spec changes.
func TestHandler(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner,
		record("propagation.web.a", "a", owner, "owner-uid"),
		record("forged", "a", owner, "someone-elses-uid"),
		record("propagation.web.b", "b", owner, "owner-uid"),
	).WithObjects(protected(t)...).Build()
	get := serve(t, &Handler{Hub: hub, Revisions: &revisions.Store{Reader: hub}})

	for _, c := range []struct {
		name, cluster, token string
		status               int
	}{
		{"no token", "a", "", http.StatusUnauthorized},
		{"an unknown token", "a", "nobody", http.StatusUnauthorized},
		{"another cluster's agent", "a", "b", http.StatusForbidden},
		{"the hub's admin", "a", "admin", http.StatusForbidden},
		{"not a cluster name", "A_", "a", http.StatusBadRequest},
	} {
		if res, _, _ := get(c.cluster, c.token, ""); res.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.status)
		}
	}

	res, w, body := get("a", "a", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a's agent: status %d (%s)", res.StatusCode, body)
	}
	if len(w.Items) != 1 || w.Items[0].Record != "team/propagation.web.a" {
		t.Fatalf("a's agent is served %+v, want the ledger's record of a alone", w.Items)
	}
	if it := w.Items[0]; it.Pending == "" || it.Objects != nil {
		t.Errorf("a record without work: %+v, want it pending", it)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if res, _, _ := get("a", "a", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("poll with the ETag: status %d", res.StatusCode)
	}
	if res, _, _ := get("a", "a", `"other", W/`+etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("poll with a list naming the weak ETag: status %d", res.StatusCode)
	}

	// A spec change (a new generation) is a new ETag; the fake client does not count
	// generations, so the test does.
	rec := &flotillav1.Delivery{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "propagation.web.a"}, rec); err != nil {
		t.Fatal(err)
	}
	rec.Generation++
	if err := hub.Update(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if res, _, _ := get("a", "a", etag); res.StatusCode != http.StatusOK || res.Header.Get("ETag") == etag {
		t.Errorf("poll after a spec change: status %d, ETag %s (was %s)", res.StatusCode, res.Header.Get("ETag"), etag)
	}
}

// TestHandlerServesOnlyWhileRecordsAreProtected: without the Delivery policy, or with a
// binding that does not deny, anyone who may edit an owner's namespace could write records the
// endpoint would serve: it answers 503 saying so, and serves again once the policy is back,
// after its interval.
func TestHandlerServesOnlyWhileRecordsAreProtected(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	policy, binding := protected(t)[0], protected(t)[1].(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	warns := binding.DeepCopy()
	warns.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}
	other := binding.DeepCopy()
	other.Spec.PolicyName = "something-else"
	for _, c := range []struct {
		name    string
		objs    []client.Object
		problem string
	}{
		{"no policy nor binding", nil, "ValidatingAdmissionPolicy flotilla-deliveries does not exist"},
		{"a policy without its binding", []client.Object{policy}, "ValidatingAdmissionPolicyBinding flotilla-deliveries does not exist"},
		{"a binding without its policy", []client.Object{binding}, "ValidatingAdmissionPolicy flotilla-deliveries does not exist"},
		{"a binding that only warns", []client.Object{policy, warns}, "does not deny"},
		{"a binding of another policy", []client.Object{policy, other}, "something-else"},
		{"the policy and its binding", []client.Object{policy, binding}, ""},
	} {
		hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner, record("propagation.web.a", "a", owner, "owner-uid")).
			WithObjects(c.objs...).Build()
		get := serve(t, &Handler{Hub: hub, Revisions: &revisions.Store{Reader: hub}})
		res, w, body := get("a", "a", "")
		switch {
		case c.problem == "" && (res.StatusCode != http.StatusOK || len(w.Items) != 1):
			t.Errorf("%s: status %d (%s), %d items; want the record served", c.name, res.StatusCode, body, len(w.Items))
		case c.problem != "" && res.StatusCode != http.StatusServiceUnavailable:
			t.Errorf("%s: status %d, want 503", c.name, res.StatusCode)
		case c.problem != "" && (!strings.Contains(body, c.problem) || !strings.Contains(body, "flotilla install")):
			t.Errorf("%s: %q says neither %q nor how to install the policy", c.name, body, c.problem)
		}
		// Who may not read the work learns nothing of the hub's policies.
		if res, _, _ := get("a", "b", ""); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: another cluster's agent: status %d, want 403", c.name, res.StatusCode)
		}
	}

	// A look is believed for the interval, and looked at again after it.
	ctx := context.Background()
	for _, c := range []struct {
		interval time.Duration
		want     int
	}{{time.Hour, http.StatusOK}, {time.Nanosecond, http.StatusServiceUnavailable}} {
		hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner, record("propagation.web.a", "a", owner, "owner-uid")).
			WithObjects(protected(t)...).Build()
		get := serve(t, &Handler{Hub: hub, Revisions: &revisions.Store{Reader: hub}, ProtectionInterval: c.interval})
		if res, _, body := get("a", "a", ""); res.StatusCode != http.StatusOK {
			t.Fatalf("interval %s, with the policy: status %d (%s)", c.interval, res.StatusCode, body)
		}
		if err := hub.Delete(ctx, protected(t)[1]); err != nil {
			t.Fatal(err)
		}
		if res, _, _ := get("a", "a", ""); res.StatusCode != c.want {
			t.Errorf("interval %s, the binding deleted: status %d, want %d", c.interval, res.StatusCode, c.want)
		}
	}
}

// TestHandlerRefusesChangesThatAddObjects: the hub's changes only change or omit the objects
// of a record's revision. A record (written by someone with the owner's UID, where the policy
// does not stop them) whose changes add an object, or make one object another, is listed as
// pending with the reason and not served; the record the hub wrote is.
func TestHandlerRefusesChangesThatAddObjects(t *testing.T) {
	ctx := context.Background()
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner).WithObjects(protected(t)...).Build()
	store := &revisions.Store{Hub: hub, Metadata: hub, Reader: hub}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "team"}, "data": map[string]any{"v": "v1"}}}
	base := []*unstructured.Unstructured{cm}
	revision, err := store.Save(ctx, ledger.Owner{Owner: ledger.OwnerOf(record("x", "a", owner, "").Spec.Owner)}, render.Revision(base), base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	withWork := func(name string, objs ...*unstructured.Unstructured) client.Object {
		changes, err := work.Changes(base, objs)
		if err != nil {
			t.Fatal(err)
		}
		rec := record(name, "a", owner, "owner-uid")
		rec.Spec.Work = &flotillav1.DeliveryWork{Revision: revision, Digest: render.Revision(objs), Changes: changes}
		return rec
	}
	changed := cm.DeepCopy()
	changed.Object["data"] = map[string]any{"v": "v2"}
	binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "tenant-is-admin"}, "roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}}}
	// The ConfigMap's change made into the ClusterRoleBinding, under the ConfigMap's key.
	renamed := withWork("renamed", binding).(*flotillav1.Delivery)
	raw, _ := json.Marshal(binding.Object)
	renamed.Spec.Work.Changes = []flotillav1.ObjectChange{{Object: render.Key(cm), Patch: &apiextensionsv1.JSON{Raw: raw}}}
	made, err := work.Apply(base, renamed.Spec.Work.Changes)
	if err != nil {
		t.Fatal(err)
	}
	renamed.Spec.Work.Digest = render.Revision(made) // the digest its writer computes
	for _, obj := range []client.Object{withWork("hubs", changed), withWork("added", changed, binding), renamed} {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	get := serve(t, &Handler{Hub: hub, Revisions: store})
	res, w, body := get("a", "a", "")
	if res.StatusCode != http.StatusOK || len(w.Items) != 3 {
		t.Fatalf("status %d (%s), %d items", res.StatusCode, body, len(w.Items))
	}
	for _, it := range w.Items {
		switch it.Record {
		case "team/hubs":
			if it.Pending != "" || len(it.Objects) != 1 || it.Objects[0].Object["data"].(map[string]any)["v"] != "v2" {
				t.Errorf("the hub's record: %+v, want its ConfigMap served", it)
			}
		default:
			if it.Objects != nil || !strings.Contains(it.Pending, "not served") || !strings.Contains(it.Pending, "ClusterRoleBinding") {
				t.Errorf("%s: pending %q, %d objects; want it refused, naming the object", it.Record, it.Pending, len(it.Objects))
			}
		}
	}
	if etag := res.Header.Get("ETag"); etag == "" {
		t.Error("no ETag: a refused record is refused until it changes")
	}
}
