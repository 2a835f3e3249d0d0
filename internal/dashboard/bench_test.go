package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// benchFleet is a fleet of 10 clusters that each run 1000 objects (100 Propagations in 10
// namespaces, 10 ConfigMaps each, every one on every cluster).
func benchFleet() []client.Object {
	var objs []client.Object
	for c := range 10 {
		objs = append(objs, &flotillav1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("spoke-%d", c)}})
	}
	for ns := range 10 {
		namespace := fmt.Sprintf("team-%d", ns)
		objs = append(objs, &flotillav1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "all"}})
		for o := range 10 {
			owner := fmt.Sprintf("app-%d", o)
			names := make([]string, 10)
			for i := range names {
				names[i] = fmt.Sprintf("%s-config-%d", owner, i)
			}
			for c := range 10 {
				objs = append(objs, record(namespace, owner, fmt.Sprintf("spoke-%d", c), "all", readyStatus("/v1/ConfigMap", namespace, names...)))
			}
		}
	}
	return objs
}

// BenchmarkPages renders the views of benchFleet for a viewer the authorizer answers for:
// `go test -run '^$' -bench Pages ./internal/dashboard`. The fake client stands for the
// informer cache (both copy what they list).
func BenchmarkPages(b *testing.B) {
	s, _ := testServer(b, benchFleet()...)
	h := s.handler()
	for _, path := range []string{"/", "/owners", "/clusters/spoke-3", "/owners/Propagation/team-3/app-3", "/placements/team-3/all"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer admin-token")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, rec.Code)
				}
			}
		})
	}
}

// BenchmarkLiveUpdate measures how long a change in the cache takes to reach a viewer of the
// cluster page of benchFleet as a server-sent event: the debounce, the page rendered again,
// and the event sent. `go test -run '^$' -bench LiveUpdate ./internal/dashboard`
func BenchmarkLiveUpdate(b *testing.B) {
	s, hub := testServer(b, benchFleet()...)
	srv := httptest.NewServer(s.handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?page=%2Fclusters%2Fspoke-3", nil)
	req.Header.Set("Authorization", "Bearer admin-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	events := bufio.NewReaderSize(resp.Body, 1<<20)
	nextEvent(b, events)
	rec := &flotillav1.Delivery{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "team-3", Name: "app-3-spoke-3"}, rec); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		// A change the page shows: app-3's objects turn from Ready to Applied and back.
		if rec.Status.Ready == rec.Status.Count {
			rec.Status.Ready--
		} else {
			rec.Status.Ready = rec.Status.Count
		}
		if err := hub.Update(ctx, rec); err != nil {
			b.Fatal(err)
		}
		s.store.bump()
		nextEvent(b, events)
	}
}

// BenchmarkBigOwner renders the page of an owner of 1000 objects on 1000 clusters (a million
// cells, shown 200 × 50 at a time): `go test -run '^$' -bench BigOwner ./internal/dashboard`.
// The records are read as the informer cache gives them (no copy).
func BenchmarkBigOwner(b *testing.B) {
	objs := bigOwner(1000, 1000)
	s, _ := testServer(b, objs...)
	s.store.reader = &sharedRecords{Reader: s.store.reader, objs: objs}
	h := s.handler()
	for _, path := range []string{"/owners/Propagation/team-a/big", "/owners/Propagation/team-a/big?cols=20&problems=1"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer admin-token")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, rec.Code)
				}
				b.ReportMetric(float64(rec.Body.Len()), "bytes/page")
			}
		})
	}
}

// sharedRecords lists Delivery records as an informer cache does with UnsafeDisableDeepCopy:
// the stored objects themselves (the fake client copies each through JSON).
type sharedRecords struct {
	client.Reader
	objs []client.Object
}

func (r *sharedRecords) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*flotillav1.DeliveryList)
	if !ok {
		return r.Reader.List(ctx, list, opts...)
	}
	for _, o := range r.objs {
		if d, ok := o.(*flotillav1.Delivery); ok {
			l.Items = append(l.Items, *d)
		}
	}
	return nil
}
