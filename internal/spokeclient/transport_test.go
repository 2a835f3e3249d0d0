package spokeclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
)

// fakeServer answers every request with its status after advancing the fake clock by took, and
// counts what reached it.
type fakeServer struct {
	clock  *clocktesting.FakePassiveClock
	status int
	took   time.Duration
	calls  atomic.Int32
}

func (s *fakeServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.calls.Add(1)
	s.clock.SetTime(s.clock.Now().Add(s.took))
	return &http.Response{StatusCode: s.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func newTestFlow(t *testing.T, l Limits) (*Flow, *fakeServer, http.RoundTripper) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(t0)
	f := newFlow("test-"+strings.ReplaceAll(t.Name(), "/", "-"), l, clk)
	t.Cleanup(f.Forget)
	srv := &fakeServer{clock: clk, status: http.StatusOK, took: time.Millisecond}
	return f, srv, newTransport(f, "")(srv)
}

func get(t *testing.T, rt http.RoundTripper, ctx context.Context, method, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt.RoundTrip(req)
}

func TestOnlyResourceRequestsTakeSlots(t *testing.T) {
	f, _, rt := newTestFlow(t, Limits{Initial: 1, Min: 1, Max: 1, SlowFactor: 4, FloorPeriod: time.Minute})
	ctx := context.Background()
	held, err := get(t, rt, ctx, http.MethodGet, "https://spoke/api/v1/namespaces/a/configmaps/b")
	if err != nil {
		t.Fatal(err)
	}
	// The one slot is held until the body is closed; these must not wait for it.
	for _, url := range []string{
		"https://spoke/api/v1/namespaces/a/configmaps?watch=true",
		"https://spoke/apis/apps/v1/deployments?watch=1&resourceVersion=5",
		"https://spoke/readyz",
		"https://spoke/livez?verbose",
		"https://spoke/version",
	} {
		resp, err := get(t, rt, ctx, http.MethodGet, url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		_ = resp.Body.Close()
	}
	// A resource request waits its turn.
	done := make(chan error, 1)
	go func() {
		resp, err := get(t, rt, ctx, http.MethodPatch, "https://spoke/apis/apps/v1/namespaces/a/deployments/b")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // the end of the body frees the slot
		}
		done <- err
	}()
	fleettest.Eventually(t, 10*time.Second, "the PATCH waits for the slot", func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.waiters) != 1 {
			return errors.New("not queued yet")
		}
		return nil
	})
	_ = held.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight != 0 || len(f.waiters) != 0 {
		t.Fatalf("%d in flight and %d waiting after every body ended, want none", f.inFlight, len(f.waiters))
	}
}

func TestABasePathIsHonoured(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	f := newFlow("base-path", testLimits, clk)
	defer f.Forget()
	cfg := f.Configure(&rest.Config{Host: "https://proxy.example/clusters/a/"})
	rt := &flowTransport{flow: f, basePath: apiBasePath(cfg)}
	for url, want := range map[string]bool{
		"https://proxy.example/clusters/a/api/v1/namespaces":    true,
		"https://proxy.example/clusters/a/apis":                 true,
		"https://proxy.example/clusters/a/readyz":               false,
		"https://proxy.example/clusters/a/apis/x/v1/y?watch=1":  false,
		"https://proxy.example/clusters/b/api/v1/namespaces":    false,
		"https://proxy.example/clusters/a/apiservices-are-not":  false,
		"https://proxy.example/clusters/a/api/v1/pods?watch=no": true,
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if got := rt.takesSlot(req); got != want {
			t.Errorf("%s takes a slot: %v, want %v", url, got, want)
		}
	}
}

func TestAWaiterGivesUpWithItsContext(t *testing.T) {
	f, srv, rt := newTestFlow(t, Limits{Initial: 1, Min: 1, Max: 1, SlowFactor: 4, FloorPeriod: time.Minute})
	held, err := get(t, rt, context.Background(), http.MethodGet, "https://spoke/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	go func() {
		_, err := get(t, rt, ctx, http.MethodGet, "https://spoke/api/v1/pods")
		failed <- err
	}()
	queued := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.waiters)
	}
	fleettest.Eventually(t, 10*time.Second, "the GET waits for the slot", func() error {
		if queued() != 1 {
			return errors.New("not queued yet")
		}
		return nil
	})
	cancel()
	if err := <-failed; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d waiters left after the only one gave up", n)
	}
	if n := srv.calls.Load(); n != 1 {
		t.Fatalf("%d requests reached the server, want 1", n)
	}
	_ = held.Body.Close()
	resp, err := get(t, rt, context.Background(), http.MethodGet, "https://spoke/api/v1/pods")
	if err != nil {
		t.Fatalf("the slot was not freed: %v", err)
	}
	_ = resp.Body.Close()
}

func TestResponsesMoveTheWindowAndItsMetrics(t *testing.T) {
	f, srv, rt := newTestFlow(t, testLimits)
	send := func(method string, status int, took time.Duration, n int) {
		t.Helper()
		srv.status, srv.took = status, took
		srv.clock.SetTime(srv.clock.Now().Add(time.Millisecond)) // sent after the last answer
		var wg sync.WaitGroup
		resps := make(chan *http.Response, n)
		for range n { // n in flight at once, so the window is busy
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := get(t, rt, context.Background(), method, "https://spoke/api/v1/namespaces/a/configmaps/b")
				if err != nil {
					t.Error(err)
					return
				}
				resps <- resp
			}()
		}
		wg.Wait()
		close(resps)
		for resp := range resps {
			_ = resp.Body.Close()
		}
	}
	send(http.MethodPatch, http.StatusOK, 2*time.Millisecond, 8)
	if got := f.Limit(); got != 8 {
		t.Fatalf("limit %d after healthy writes, want 8", got)
	}
	send(http.MethodPatch, http.StatusTooManyRequests, time.Millisecond, 1)
	if got := f.Limit(); got != 4 {
		t.Fatalf("limit %d after a 429, want 4", got)
	}
	send(http.MethodPatch, http.StatusOK, 300*time.Millisecond, 1)
	send(http.MethodPatch, http.StatusOK, 300*time.Millisecond, 1) // the average of writes is now well above the floor
	if got := f.Limit(); got != 3 {
		t.Fatalf("limit %d after slow writes, want 3", got)
	}
	if n := srv.calls.Load(); n != 11 {
		t.Fatalf("%d requests reached the server, want 11: the transport never retries", n)
	}
	// Every answered write is timed, the 429 too; a read is not. The eight concurrent writes
	// share the fake clock, so each took between 2 and 16 ms.
	send(http.MethodGet, http.StatusOK, time.Second, 1)
	writes := &dto.Metric{}
	if err := writeDuration.WithLabelValues(f.cluster).(prometheus.Metric).Write(writes); err != nil {
		t.Fatal(err)
	}
	if n, sum := writes.GetHistogram().GetSampleCount(), writes.GetHistogram().GetSampleSum(); n != 11 || sum < 0.6169 || sum > 0.73 {
		t.Errorf("write latency: %d writes summing %v s, want 11 summing 0.617 to 0.73 s", n, sum)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"throttled responses", testutil.ToFloat64(throttledResponses.WithLabelValues(f.cluster)), 1},
		{"limit", testutil.ToFloat64(inFlightLimit.WithLabelValues(f.cluster)), 3},
		{"in flight", testutil.ToFloat64(inFlightRequests.WithLabelValues(f.cluster)), 0},
		{"throttled decreases", testutil.ToFloat64(limitDecreases.WithLabelValues(f.cluster, string(throttled))), 1},
		{"latency decreases", testutil.ToFloat64(limitDecreases.WithLabelValues(f.cluster, string(slow))), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestForgetDropsTheClusterSeries(t *testing.T) {
	seriesOf := func(cluster string) int {
		n := 0
		for name, c := range map[string]prometheus.Collector{
			"flotilla_spoke_requests_in_flight": inFlightRequests, "flotilla_spoke_in_flight_limit": inFlightLimit,
			"flotilla_spoke_request_wait_seconds": requestWait, "flotilla_spoke_throttled_responses_total": throttledResponses,
			"flotilla_spoke_in_flight_decreases_total": limitDecreases, "flotilla_spoke_write_duration_seconds": writeDuration,
		} {
			text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, name)
			if err != nil {
				t.Fatal(err)
			}
			n += strings.Count(string(text), `cluster="`+cluster+`"`)
		}
		return n
	}
	gone, stays := newFlow("forget-gone", testLimits, clocktesting.NewFakePassiveClock(t0)), newFlow("forget-stays", testLimits, clocktesting.NewFakePassiveClock(t0))
	defer stays.Forget()
	for _, f := range []*Flow{gone, stays} {
		srv := &fakeServer{clock: f.clock.(*clocktesting.FakePassiveClock), status: http.StatusTooManyRequests}
		resp, err := get(t, newTransport(f, "")(srv), context.Background(), http.MethodPatch, "https://spoke/api/v1/namespaces/a")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if n := seriesOf("forget-gone"); n < 6 {
		t.Fatalf("%d series before Forget, want every metric", n)
	}
	gone.Forget()
	gone.observe(response{sent: t0.Add(time.Hour), answered: t0.Add(time.Hour), wait: true}) // a request still finishing
	if n := seriesOf("forget-gone"); n != 0 {
		t.Fatalf("%d series after Forget, want 0", n)
	}
	if n := seriesOf("forget-stays"); n < 6 {
		t.Fatalf("another cluster lost its series: %d left", n)
	}
}

// TestClientGoRetriesA429Once checks the division of labour with client-go on a real HTTP
// server: client-go retries the 429 after its Retry-After, the Flow only counts it and halves
// its window, and the server sees exactly two requests.
func TestClientGoRetriesA429Once(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"a"}}`)
	}))
	defer srv.Close()
	f := New("client-go-retry")
	defer f.Forget()
	cfg := f.Configure(&rest.Config{Host: srv.URL, QPS: 5, Burst: 10})
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Fatalf("QPS %v and rate limiter %v, want no client-side rate limit", cfg.QPS, cfg.RateLimiter)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("a").Get(context.Background(), "b", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the server saw %d requests, want 2 (one 429, one retry by client-go)", n)
	}
	if got, want := f.Limit(), DefaultLimits.Initial/2; got != want {
		t.Fatalf("limit %d after a 429, want %d", got, want)
	}
	if n := testutil.ToFloat64(throttledResponses.WithLabelValues(f.cluster)); n != 1 {
		t.Fatalf("%v throttled responses counted, want 1", n)
	}
}

// cancelRecorder is a transport that records the requests client-go asks it to cancel.
type cancelRecorder struct {
	fakeServer
	cancelled atomic.Int32
}

func (c *cancelRecorder) CancelRequest(*http.Request) { c.cancelled.Add(1) }

// TestClientGoCancelsThroughTheFlow: client-go cancels a request by calling CancelRequest down
// its chain of wrappers; the Flow's transport must pass it on to the transport that sends the
// request, and must not stop it there (client-go then logs "unable to cancel request").
func TestClientGoCancelsThroughTheFlow(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	f := newFlow("cancel", testLimits, clk)
	defer f.Forget()
	inner := &cancelRecorder{fakeServer: fakeServer{clock: clk, status: http.StatusOK}}
	cfg := f.Configure(&rest.Config{Host: "https://spoke.example", BearerToken: "t", UserAgent: "flotilla", Transport: inner})
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	canceler, ok := rt.(interface{ CancelRequest(*http.Request) })
	if !ok {
		t.Fatalf("client-go's transport %T cannot cancel requests", rt)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://spoke.example/api/v1/namespaces", nil)
	canceler.CancelRequest(req)
	if n := inner.cancelled.Load(); n != 1 {
		t.Fatalf("the transport under the Flow was asked to cancel %d times, want 1", n)
	}
}
