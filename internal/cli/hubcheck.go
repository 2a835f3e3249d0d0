package cli

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// hubCheckTimeout bounds the one discovery request that checks the hub.
const hubCheckTimeout = 15 * time.Second

// servesFlotilla checks that cfg reaches an API server that serves Flotilla's API, with one
// discovery request (within timeout), and otherwise says what to do next: a hub that does not answer needs the
// right kubeconfig (or a local fleet), one without Flotilla's CRDs needs `flotilla install`.
func servesFlotilla(cfg *rest.Config, timeout time.Duration) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("hub connection: %w", err)
	}
	_, err = dc.ServerResourcesForGroupVersion(flotillav1.GroupVersion.String())
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return hintedError{err: err, msg: fmt.Sprintf("no Flotilla hub at %s: it does not serve Flotilla's API (%s); "+
			"install Flotilla there with `flotilla install --kubeconfig FILE`, or point --kubeconfig/--context at a hub "+
			"(a local one: `flotilla dev up`, or `make dev` in a checkout)", cfg.Host, flotillav1.GroupVersion)}
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return hintedError{err: err, msg: fmt.Sprintf("the hub at %s refused the kubeconfig's credentials (%v); "+
			"check --kubeconfig and --context, or renew the credentials", cfg.Host, err)}
	}
	return hintedError{err: err, msg: fmt.Sprintf("no Flotilla hub at %s: %v; point --kubeconfig/--context at a running hub, "+
		"or start a local one with `flotilla dev up` (`make dev` in a checkout)", cfg.Host, err)}
}
