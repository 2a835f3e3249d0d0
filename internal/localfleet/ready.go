package localfleet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// Readiness deadlines. A cold API server on a busy 2-core machine takes a few seconds; the
// deadlines are generous so that a slow machine is not mistaken for a broken plane.
const (
	apiServerReadyTimeout = 90 * time.Second
	workloadReadyTimeout  = 90 * time.Second
	pollInterval          = 100 * time.Millisecond
)

// waitFor calls check until it returns nil, a component of the plane exits, or the timeout or
// ctx ends. The error of a late check is returned together with what was being waited for.
func (p *Plane) waitFor(ctx context.Context, what string, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		if err := p.exitedComponent(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		lastErr := check(ctx)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s (last check: %v); logs are in %s", what, timeout, lastErr, p.dir)
		case <-ticker.C:
		}
	}
}

// waitAPIServerReady waits until the API server's /readyz answers ok.
func (p *Plane) waitAPIServerReady(ctx context.Context) error {
	return p.waitGetOK(ctx, "kube-apiserver /readyz", apiServerReadyTimeout, 2*time.Second, "/readyz")
}

// waitGetOK waits until a GET of each path (with its query) of the API server, as the plane's
// admin, answers 200 OK, each request bounded by requestTimeout.
func (p *Plane) waitGetOK(ctx context.Context, what string, timeout, requestTimeout time.Duration, paths ...string) error {
	cfg := p.RESTConfig()
	cfg.Timeout = requestTimeout
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	defer httpClient.CloseIdleConnections()
	for _, path := range paths {
		url := p.Server() + path
		err := p.waitFor(ctx, what, timeout, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				return err
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%w: GET %s: HTTP %d: %s", errNotReady, path, resp.StatusCode, body)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
