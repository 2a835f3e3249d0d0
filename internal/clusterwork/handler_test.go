package clusterwork

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// tokens stands in for the hub's TokenReview: each token is one user, accepted only when the
// review asks for Audience (as the delegating authenticator does, from the request context).
func tokens(users map[string]string) authenticator.Request {
	return authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		name, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if auds, _ := authenticator.AudiencesFrom(r.Context()); !ok || !auds.Has(Audience) {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
	})
}

func record(name, cluster string, owner *flotillav1.Propagation, uid string) *flotillav1.Delivery {
	return &flotillav1.Delivery{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.Namespace, Labels: map[string]string{flotillav1.LabelCluster: cluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: flotillav1.GroupVersion.String(), Kind: "Propagation", Name: owner.Name, UID: types.UID(uid)}}},
		Spec: flotillav1.DeliverySpec{Cluster: cluster, Owner: flotillav1.DeliveryOwner{APIVersion: flotillav1.GroupVersion.String(),
			Kind: "Propagation", Namespace: owner.Namespace, Name: owner.Name}},
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
	).Build()
	h := &Handler{
		Hub: hub,
		Owners: ledger.Owners{schema.GroupKind{Group: flotillav1.GroupVersion.Group, Kind: "Propagation"}: {
			New: func() client.Object { return &flotillav1.Propagation{} }}},
		Revisions:     &revisions.Store{Reader: hub},
		Authenticator: tokens(map[string]string{"a": membership.AgentUser("a"), "b": membership.AgentUser("b"), "admin": "kubernetes-admin"}),
	}
	srv := httptest.NewServer(h.Routes())
	defer srv.Close()
	get := func(cluster, token, etag string) (*http.Response, Work) {
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
		var w Work
		if res.StatusCode == http.StatusOK {
			if err := json.NewDecoder(res.Body).Decode(&w); err != nil {
				t.Fatal(err)
			}
		}
		return res, w
	}

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
		if res, _ := get(c.cluster, c.token, ""); res.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.status)
		}
	}

	res, w := get("a", "a", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a's agent: status %d", res.StatusCode)
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
	if res, _ := get("a", "a", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("poll with the ETag: status %d", res.StatusCode)
	}
	if res, _ := get("a", "a", `"other", W/`+etag); res.StatusCode != http.StatusNotModified {
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
	if res, _ := get("a", "a", etag); res.StatusCode != http.StatusOK || res.Header.Get("ETag") == etag {
		t.Errorf("poll after a spec change: status %d, ETag %s (was %s)", res.StatusCode, res.Header.Get("ETag"), etag)
	}
}
