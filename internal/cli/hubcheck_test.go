package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestNoHubSaysWhatToDo: a kubeconfig whose server does not answer, one that serves no
// Flotilla API, and one that refuses the credentials each get an error naming the server and
// the next step, instead of a discovery error.
func TestNoHubSaysWhatToDo(t *testing.T) {
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d}`, code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close() // nothing listens there any more
	for _, tc := range []struct {
		what, host string
		want       []string
	}{
		{"nothing listens", refused.URL, []string{"no Flotilla hub at " + refused.URL + ": ", "connection refused",
			"point --kubeconfig/--context at a running hub, or start a local one with `flotilla dev up`"}},
		{"no Flotilla API", status(http.StatusNotFound), []string{"it does not serve Flotilla's API (flotilla.dev/v1alpha1); install Flotilla there with `flotilla install"}},
		{"credentials refused", status(http.StatusUnauthorized), []string{"refused the kubeconfig's credentials", "check --kubeconfig and --context"}},
	} {
		err := servesFlotilla(&rest.Config{Host: tc.host}, 5*time.Second)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want %q in it", tc.what, err, want)
			}
		}
	}
}
