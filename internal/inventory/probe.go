package inventory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// prober checks one spoke's API server. It holds its own HTTP client, so probes of a slow spoke
// never wait on another's connections.
type prober struct {
	discovery *discovery.DiscoveryClient
}

func newProber(cfg *rest.Config) (*prober, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &prober{discovery: d}, nil
}

// readyz asks the API server whether it is ready. One request: this is what runs every probe
// period, so an idle fleet costs each spoke one cheap GET per period.
func (p *prober) readyz(ctx context.Context) observation {
	body, err := p.discovery.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return classify(err)
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return observation{metav1.ConditionFalse, flotillav1.ReasonNotKubernetes,
			"the server answered /readyz without \"ok\"; check that spec.credentials points at a Kubernetes API server"}
	}
	return observation{metav1.ConditionTrue, flotillav1.ReasonProbed, "the API server is ready and accepts Flotilla's credentials"}
}

// version returns the API server's version.
func (p *prober) version(ctx context.Context) (string, observation, bool) {
	body, err := p.discovery.RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", classify(err), false
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil || info.GitVersion == "" {
		return "", observation{metav1.ConditionFalse, flotillav1.ReasonNotKubernetes,
			"the server's /version has no gitVersion; check that spec.credentials points at a Kubernetes API server"}, false
	}
	return info.GitVersion, observation{}, true
}

// classify turns a probe error into the Ready condition to record. Unreachable spokes are
// Unknown (they may well be fine); spokes that answer but refuse us are False with a reason
// that says what to fix. Messages never carry credentials: only the server address and the
// kind of failure.
func classify(err error) observation {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
		status           apierrors.APIStatus
	)
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify):
		return observation{metav1.ConditionFalse, flotillav1.ReasonCertificateInvalid,
			"the spoke's serving certificate is not trusted by the kubeconfig's certificate-authority-data (" + tlsSummary(err) + "); update the credentials Secret"}
	case apierrors.IsUnauthorized(err):
		return observation{metav1.ConditionFalse, flotillav1.ReasonUnauthorized,
			"the spoke rejected Flotilla's credentials (401 Unauthorized): the token is expired or revoked; run `flotilla join` again to issue new credentials"}
	case apierrors.IsForbidden(err):
		return observation{metav1.ConditionFalse, flotillav1.ReasonForbidden,
			"the spoke accepted Flotilla's credentials but forbids health checks (403); grant the ServiceAccount access or run `flotilla join` again"}
	case isUnreachable(err):
		return observation{metav1.ConditionUnknown, flotillav1.ReasonUnreachable,
			"cannot reach the spoke API server: " + networkSummary(err)}
	case errors.As(err, &status) && (apierrors.IsNotFound(err) || status.Status().Code == http.StatusNotFound):
		return observation{metav1.ConditionFalse, flotillav1.ReasonNotKubernetes,
			"the server has no Kubernetes health endpoint (404 on /readyz); check that spec.credentials points at a Kubernetes API server"}
	case errors.As(err, &status) && status.Status().Code == http.StatusInternalServerError:
		return observation{metav1.ConditionFalse, flotillav1.ReasonNotReady,
			"the spoke API server reports that it is not ready (/readyz failed)"}
	default:
		return observation{metav1.ConditionFalse, flotillav1.ReasonNotKubernetes,
			"the server did not answer like a Kubernetes API server: " + shorten(err.Error())}
	}
}

func isUnreachable(err error) bool {
	var (
		netErr net.Error
		opErr  *net.OpError
		urlErr *url.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	case errors.As(err, &opErr):
		return true
	case errors.As(err, &urlErr) && (strings.Contains(urlErr.Error(), "EOF") || strings.Contains(urlErr.Error(), "connection")):
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err)
}

func networkSummary(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "timed out"
	}
	return shorten(err.Error())
}

func tlsSummary(err error) string {
	var unknownAuthority x509.UnknownAuthorityError
	if errors.As(err, &unknownAuthority) {
		return "certificate signed by unknown authority"
	}
	var hostname x509.HostnameError
	if errors.As(err, &hostname) {
		return "certificate is not valid for the server's address"
	}
	return "certificate verification failed"
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// summary is what a failed observation looks like in an error message.
func (o observation) String() string {
	return fmt.Sprintf("%s (%s): %s", o.status, o.reason, o.message)
}
