package spokeclient

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// newTransport wraps a spoke's HTTP transport with the Flow. basePath is the path of the
// spoke's server URL ("" for most; a proxy such as https://proxy/clusters/a has one).
func newTransport(f *Flow, basePath string) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		return &flowTransport{flow: f, next: next, basePath: basePath}
	}
}

type flowTransport struct {
	flow     *Flow
	next     http.RoundTripper
	basePath string
}

// WrappedRoundTripper makes the Flow's transport one of client-go's wrappers
// (k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper). client-go cancels a request (a
// timeout, say, while a spoke does not answer) by calling CancelRequest down its chain of
// wrappers; without this it stopped here and logged "unable to cancel request" for every
// request cancelled. The request is passed on unchanged, so cancelling it in next cancels it;
// one still waiting for a slot gives up with its context.
func (t *flowTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *flowTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.takesSlot(req) {
		return t.next.RoundTrip(req)
	}
	if err := t.flow.acquire(req.Context()); err != nil {
		return nil, err
	}
	sent := t.flow.clock.Now()
	resp, err := t.next.RoundTrip(req)
	t.flow.observe(responseOf(req, resp, err, sent, t.flow.clock.Now()))
	if err != nil || resp.Body == nil {
		t.flow.release()
		return resp, err
	}
	// The server works on a request until it has written the whole body: the slot is held
	// until the body is read to its end or closed.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: t.flow.release}
	return resp, nil
}

// takesSlot tells requests to the resource API, which take a slot, from watches and the
// server's own paths (/readyz, /livez, /healthz, /version, ...), which do not.
func (t *flowTransport) takesSlot(req *http.Request) bool {
	p, ok := strings.CutPrefix(req.URL.Path, t.basePath)
	if !ok || !(p == "/api" || p == "/apis" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/")) {
		return false
	}
	switch req.URL.Query().Get("watch") {
	case "true", "1":
		return false
	}
	return true
}

// responseOf is what the window learns from one round trip.
func responseOf(req *http.Request, resp *http.Response, err error, sent, answered time.Time) response {
	r := response{sent: sent, answered: answered}
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		r.write = true
	}
	switch {
	case err != nil:
		r.failed = true
	case resp.StatusCode == http.StatusTooManyRequests:
		r.wait = true
	case resp.StatusCode >= 500:
		// client-go waits on (and retries) a 5xx only when it carries Retry-After.
		r.wait = resp.Header.Get("Retry-After") != ""
		r.failed = !r.wait
	}
	return r
}

// releasingBody frees the request's slot once, at the end of the body or when it is closed.
type releasingBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.release)
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// apiBasePath is the path of a config's server URL, without a trailing slash.
func apiBasePath(cfg *rest.Config) string {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}
