package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

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
	if ns.UID == "" {
		return "", errors.New("the spoke's kube-system namespace has no UID")
	}
	return string(ns.UID), nil
}

// identifyError says why a spoke could not be identified in words that carry no credential
// (the server address at most; the hardened loader refuses addresses with credentials).
func identifyError(err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return errors.New("the spoke rejected the credentials (401 Unauthorized)")
	case apierrors.IsForbidden(err):
		return errors.New("the credentials may not read namespace kube-system (403 Forbidden), whose UID identifies the spoke")
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Errorf("cannot reach the spoke: %s", msg)
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
