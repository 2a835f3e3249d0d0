package clusterwork

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/install"
	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// TestRequestsWaitForAChange: a request with the current ETag and waitSeconds is held: a new
// record of its cluster answers it at once with the new work, and held requests leave their
// place in flight to others; with nothing changing it is answered 304 when its wait is over.
// A status write of the cluster's record, or a change of another cluster's, wakes nobody.
func TestRequestsWaitForAChange(t *testing.T) {
	owner := &flotillav1.Propagation{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "owner-uid"}}
	hub := fake.NewClientBuilder().WithScheme(install.Scheme()).WithObjects(owner, record("propagation.web.a", "a", owner, "owner-uid")).
		WithObjects(protected(t)...).Build()
	changes := &Changes{}
	feed := changes.RecordHandler()
	h := &Handler{Hub: hub, Revisions: &revisions.Store{Reader: hub}, Changes: changes, MaxInFlight: 1}
	get := serve(t, h)
	res, _, _ := get("a", "a", "")
	etag := res.Header.Get("ETag")
	if res.StatusCode != http.StatusOK || etag == "" {
		t.Fatalf("first request: %d, ETag %q", res.StatusCode, etag)
	}
	srv := httptest.NewServer(h.Routes())
	defer srv.Close()
	held := func(cluster string, wait int) chan *http.Response {
		out := make(chan *http.Response, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/clusters/%s/work?%s=%d", srv.URL, cluster, WaitParameter, wait), nil)
			req.Header.Set("Authorization", "Bearer a")
			req.Header.Set("If-None-Match", etag)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				out <- nil
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			out <- res
		}()
		return out
	}
	waiting := held("a", 30)
	waitUntilHeld(t, h, "a")
	// With the one place in flight given back, another request is served.
	if res, _, body := get("a", "a", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("a request beside a held one: %d (%s)", res.StatusCode, body)
	}
	// A status write and another cluster's record wake nobody.
	rec := record("propagation.web.a", "a", owner, "owner-uid")
	withStatus := rec.DeepCopy()
	withStatus.Status.Applied = 1
	feed.OnUpdate(rec, withStatus)
	feed.OnAdd(record("propagation.web.b", "b", owner, "owner-uid"), false)
	select {
	case res := <-waiting:
		t.Fatalf("woken by a status write or another cluster: %v", res)
	case <-time.After(200 * time.Millisecond):
	}
	// A new record of a: the held request is answered at once with the new work.
	added := record("propagation.web2.a", "a", owner, "owner-uid")
	if err := hub.Create(context.Background(), added); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	feed.OnAdd(added, false)
	select {
	case res := <-waiting:
		if res == nil || res.StatusCode != http.StatusOK || res.Header.Get("ETag") == etag {
			t.Fatalf("after a change: %v", res)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("answered %s after the change", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change did not answer the held request")
	}
	// Nothing changes: answered 304 when the wait is over.
	res, _, _ = get("a", "a", "")
	etag = res.Header.Get("ETag")
	start = time.Now()
	select {
	case res := <-held("a", 1):
		if res == nil || res.StatusCode != http.StatusNotModified || time.Since(start) < time.Second {
			t.Fatalf("after its wait: %v after %s, want 304 after 1s", res, time.Since(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a wait of 1 s never ended")
	}
}

// waitUntilHeld waits until a request for cluster is held, its place in flight given back.
func waitUntilHeld(t *testing.T, h *Handler, cluster string) {
	t.Helper()
	fleettest.Eventually(t, 10*time.Second, "a request held", func() error {
		h.Changes.mu.Lock()
		n := h.Changes.waiters[cluster]
		h.Changes.mu.Unlock()
		if n == 0 || len(h.inFlight) != 0 {
			return fmt.Errorf("%d held, %d in flight", n, len(h.inFlight))
		}
		return nil
	})
}

func TestWaitOf(t *testing.T) {
	for q, want := range map[string]time.Duration{"": 0, "?waitSeconds=5": 5 * time.Second, "?waitSeconds=3600": MaxWait} {
		r := httptest.NewRequest(http.MethodGet, "/clusters/a/work"+q, nil)
		if got, err := waitOf(r); err != nil || got != want {
			t.Errorf("%q: %s, %v; want %s", q, got, err, want)
		}
	}
	for _, q := range []string{"?waitSeconds=x", "?waitSeconds=-1"} {
		if _, err := waitOf(httptest.NewRequest(http.MethodGet, "/clusters/a/work"+q, nil)); err == nil {
			t.Errorf("%q accepted", q)
		}
	}
}

// TestReviewUnavailable: an outage of the hub API server is told from a refused token.
func TestReviewUnavailable(t *testing.T) {
	for err, want := range map[error]bool{
		&url.Error{Op: "Post", URL: "https://hub/apis", Err: errors.New("connection refused")}: true,
		apierrors.NewServiceUnavailable("starting"):                                            true,
		apierrors.NewTooManyRequests("slow down", 1):                                           true,
		context.DeadlineExceeded:                                                               true,
		errors.New("[invalid bearer token, service account token has been invalidated]"):       false,
		apierrors.NewForbidden(schema.GroupResource{Resource: "tokenreviews"}, "", nil):        false,
	} {
		if got := reviewUnavailable(err); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
}
