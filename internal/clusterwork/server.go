package clusterwork

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// Server serves a handler on its own address until its context ends: over TLS with CertFile
// and KeyFile (reloaded when they change on disk), else as plain HTTP. It runs on every hub
// replica (it only reads the hub cache), not on the elected one alone.
type Server struct {
	Addr              string
	CertFile, KeyFile string
	Handler           http.Handler
	// Ready, when set, is told the URL served once the address is bound.
	Ready func(url string)
}

// NeedLeaderElection says the endpoint is served by every replica.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		// Requests held waiting for a change end with the server.
		BaseContext: func(net.Listener) context.Context { return ctx }}
	scheme := "http"
	if s.CertFile != "" || s.KeyFile != "" {
		watcher, err := certwatcher.New(s.CertFile, s.KeyFile)
		if err != nil {
			return fmt.Errorf("work endpoint: load its certificate: %w", err)
		}
		go func() { _ = watcher.Start(ctx) }()
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: watcher.GetCertificate}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("work endpoint: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if s.Ready != nil {
		s.Ready(scheme + "://" + ln.Addr().String())
	}
	if scheme == "https" {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return fmt.Errorf("work endpoint: %w", err)
}
