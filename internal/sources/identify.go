package sources

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// identifyTimeout bounds the one request that identifies a spoke.
const identifyTimeout = 5 * time.Second

// identityCacheSize bounds the remembered identities; past it the memory starts afresh (a
// forgotten identity costs one more GET).
const identityCacheSize = 4096

// identifier tells which API server a kubeconfig reaches: the UID of its kube-system
// namespace, as `flotilla join` records it (flotilla.dev/cluster-id). It asks each spoke once
// per kubeconfig: the answer is remembered by the kubeconfig's hash, so a steady fleet and its
// resyncs cost the spokes nothing.
type identifier struct {
	userAgent string
	get       func(ctx context.Context, cfg *rest.Config) (string, error) // tests replace it

	mu    sync.Mutex
	known map[string]string // kubeconfig hash → kube-system UID
}

func newIdentifier(userAgent string) *identifier {
	return &identifier{userAgent: userAgent, get: kubeSystemUID, known: map[string]string{}}
}

// identify returns the spoke's identity. cfg is the parsed kubeconfig; data its bytes.
func (i *identifier) identify(ctx context.Context, data []byte, cfg *rest.Config) (string, error) {
	h := hashOf(data)
	i.mu.Lock()
	id, ok := i.known[h]
	i.mu.Unlock()
	if ok {
		return id, nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = i.userAgent
	cfg.Timeout = identifyTimeout
	id, err := i.get(ctx, cfg)
	if err != nil {
		return "", err
	}
	i.mu.Lock()
	if len(i.known) >= identityCacheSize {
		i.known = map[string]string{}
	}
	i.known[h] = id
	i.mu.Unlock()
	return id, nil
}

func kubeSystemUID(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", identifyError(err)
	}
	// The UID becomes a label of the Cluster and is named in Events: only a UID is taken,
	// never whatever else a server that is not a Kubernetes API server puts there.
	if _, err := uuid.Parse(string(ns.UID)); err != nil {
		return "", errors.New("the server's answer is not a Kubernetes namespace with a UID; it is not a Kubernetes API server")
	}
	return string(ns.UID), nil
}

// identifyError says why a spoke could not be identified in Flotilla's words: an HTTP status,
// a class of TLS or network failure, a timeout. The error's own text is never used: it may
// quote what the server answered (any server a kubeconfig names, which need not be a
// Kubernetes API server), and Events and logs are not for that.
func identifyError(err error) error {
	var status apierrors.APIStatus
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verification *tls.CertificateVerificationError
	var recordHeader tls.RecordHeaderError
	var dns *net.DNSError
	var netErr net.Error
	switch {
	case apierrors.IsUnauthorized(err):
		return errors.New("the spoke rejected the credentials (401 Unauthorized)")
	case apierrors.IsForbidden(err):
		return errors.New("the credentials may not read namespace kube-system (403 Forbidden), whose UID identifies the spoke")
	case errors.As(err, &status) && status.Status().Code != 0:
		code := int(status.Status().Code)
		return fmt.Errorf("the server answered HTTP %d %s to a GET of namespace kube-system", code, http.StatusText(code))
	case errors.As(err, &status):
		return errors.New("the server's answer is not a Kubernetes API server's")
	case errors.As(err, &unknownAuthority):
		return errors.New("TLS: the server's certificate is not signed by the kubeconfig's certificate authority (x509: unknown authority)")
	case errors.As(err, &hostname):
		return errors.New("TLS: the server's certificate is not valid for the kubeconfig's server address (x509: host name mismatch)")
	case errors.As(err, &invalid):
		return errors.New("TLS: the server's certificate is invalid or expired (x509)")
	case errors.As(err, &verification):
		return errors.New("TLS: the server's certificate could not be verified (x509)")
	case errors.As(err, &recordHeader), strings.Contains(err.Error(), plainHTTPAnswer):
		return errors.New("TLS: the server does not speak TLS at the kubeconfig's address")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("the spoke did not answer within %s (timeout)", identifyTimeout)
	case errors.As(err, &dns):
		return errors.New("the server's host name does not resolve (DNS)")
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("the server refused the connection (nothing listens at the kubeconfig's address)")
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the server closed the connection")
	case errors.As(err, &netErr):
		return errors.New("the spoke cannot be reached (network error)")
	}
	return errors.New("the server's answer is not a Kubernetes API server's")
}

// plainHTTPAnswer is net/http's own words (not the server's) for a plain-HTTP answer to a TLS
// handshake; it keeps no type to match.
const plainHTTPAnswer = "server gave HTTP response to HTTPS client"

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
