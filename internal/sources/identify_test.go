package sources

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// canaryBody is what a server that is not a Kubernetes API server answers; nothing of it may
// reach an Event or a log line.
const canaryBody = "CANARY-5d1f3e: secret-looking server text"

// TestIdentifyNeverReflectsTheAnswer asks servers that answer with text of their own, in every
// way a GET can fail, and checks that the reason given names the failure and quotes none of it.
func TestIdentifyNeverReflectsTheAnswer(t *testing.T) {
	answer := func(code int, contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}
	}
	status := func(code int) string {
		return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`, canaryBody, canaryBody, code)
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"a 500 with an HTML body", answer(500, "text/html", "<html>"+canaryBody+"</html>"), "HTTP 500 Internal Server Error"},
		{"a 404 with a plain body", answer(404, "text/plain", canaryBody), "HTTP 404 Not Found"},
		{"a Kubernetes Status of its own making", answer(503, "application/json", status(503)), "HTTP 503 Service Unavailable"},
		{"a 401 Status", answer(401, "application/json", status(401)), "401 Unauthorized"},
		{"a 403 Status", answer(403, "application/json", status(403)), "403 Forbidden"},
		{"a 200 that is not JSON", answer(200, "application/json", canaryBody), "not a Kubernetes API server"},
		{"a namespace whose UID is not a UID", answer(200, "application/json",
			fmt.Sprintf(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system","uid":%q}}`, canaryBody)), "not a Kubernetes API server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(tc.handler)
			defer srv.Close()
			_, err := kubeSystemUID(context.Background(), &rest.Config{Host: srv.URL, Timeout: time.Second,
				TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
			if err == nil {
				t.Fatal("identified")
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("the reason quotes the server's answer: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("reason %q does not say %q", err, tc.want)
			}
		})
	}

	t.Run("failures below HTTP are named by their class", func(t *testing.T) {
		untrusted := httptest.NewTLSServer(answer(200, "text/plain", canaryBody))
		defer untrusted.Close()
		plain := httptest.NewServer(answer(200, "text/plain", canaryBody))
		defer plain.Close()
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		refused := "https://" + closed.Addr().String()
		closed.Close()
		hang := make(chan struct{})
		slow := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
		defer slow.Close()
		defer close(hang)
		for _, tc := range []struct {
			name, host string
			insecure   bool
			want       string
		}{
			{"a certificate of an unknown authority", untrusted.URL, false, "x509: unknown authority"},
			{"no TLS at the address", strings.Replace(plain.URL, "http://", "https://", 1), false, "does not speak TLS"},
			{"nothing listening", refused, true, "refused the connection"},
			{"no answer in time", slow.URL, true, "timeout"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := kubeSystemUID(context.Background(), &rest.Config{Host: tc.host, Timeout: 500 * time.Millisecond,
					TLSClientConfig: rest.TLSClientConfig{Insecure: tc.insecure}})
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "CANARY") {
					t.Fatalf("reason %v, want one saying %q", err, tc.want)
				}
			})
		}
	})
}
