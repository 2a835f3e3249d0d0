package sources_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-dev/flotilla/internal/localfleet/fleettest"
	"github.com/flotilla-dev/flotilla/internal/sources"
)

// TestIdentificationReflectsNothing registers, through a kubeconfig Secret, a server that is
// not a Kubernetes API server and answers every request with a canary: the source gets an
// Unidentified Event that says what went wrong in Flotilla's words, and the canary appears in
// nothing a reader of the hub can list, nor in the controller's logs.
func TestIdentificationReflectsNothing(t *testing.T) {
	const canary = "CANARY-reflected-3f9a"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":500}`, canary, canary)
	}))
	defer srv.Close()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["liar"] = &clientcmdapi.Cluster{Server: srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	kc.AuthInfos["liar"] = &clientcmdapi.AuthInfo{Token: "a-token"}
	kc.Contexts["liar"] = &clientcmdapi.Context{Cluster: "liar", AuthInfo: "liar"}
	kc.CurrentContext = "liar"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}

	e := startEnv(t, sources.Options{KubeconfigSecrets: true}, nil)
	e.create(t, secret("flotilla-system", "liar", kubeconfigLabel, map[string][]byte{"kubeconfig": data}))
	msg := e.event(t, "flotilla-system", "liar", sources.ReasonUnidentified)
	if !strings.Contains(msg, "HTTP 500") {
		t.Errorf("the Event %q does not say the server answered HTTP 500", msg)
	}
	e.absent(t, "liar", time.Second)
	fleettest.NoCanary(t, context.Background(), e.fleet.Hub().RESTConfig(), canary, logs.String())
}
