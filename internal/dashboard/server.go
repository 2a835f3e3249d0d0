package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// Options configures Serve.
type Options struct {
	// Addr is where to listen, e.g. 127.0.0.1:8000 (port 0 picks one).
	Addr string
	// Hub serves the hub's dashboard: every request must carry its caller's bearer token and
	// sees what the caller may read. Otherwise the dashboard is the kubeconfig user's own.
	Hub bool
	// Ready is called with the dashboard's URL once it serves; the local dashboard's carries
	// its key.
	Ready func(url string)
	// Log receives a line per request refused for its credentials; nil discards them.
	Log io.Writer
}

// server holds what every page needs.
type server struct {
	opts  Options
	cfg   *rest.Config  // the hub; on the hub, approvals use its address with the caller's token
	hub   client.Client // direct reads (diffs), and the authorizer's reviews
	store *store
	authz *authorizer
	authn *authenticator
	pages *http.ServeMux
	key   string // the local dashboard's URL key (localkey.go)
	// csrfKey keys the sessions' tokens for forms (approve.go).
	csrfKey []byte
}

// Serve runs the dashboard with cfg until ctx ends.
func Serve(ctx context.Context, cfg *rest.Config, opts Options) error {
	s, err := newServer(ctx, cfg, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	// Requests live in ctx: when it ends, event streams end with it and shutdown is quick.
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if opts.Ready != nil {
		url := "http://" + ln.Addr().String() + "/"
		if s.key != "" {
			url += "?key=" + s.key
		}
		opts.Ready(url)
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func newServer(ctx context.Context, cfg *rest.Config, opts Options) (*server, error) {
	hub, err := client.New(cfg, client.Options{Scheme: install.Scheme()})
	if err != nil {
		return nil, err
	}
	s := &server{opts: opts, cfg: cfg, hub: hub, authz: newAuthorizer(hub, !opts.Hub), csrfKey: randomBytes(32)}
	if !opts.Hub {
		s.key = newKey()
	}
	s.authn = newAuthenticator(hub, s.authz)
	resources := map[string]bool{}
	for _, k := range cachedKinds {
		// The hub's dashboard caches everything and filters per viewer; the user's own caches
		// what they may list everywhere, and asks about the rest per namespace.
		resources[k.resource] = opts.Hub || viewer{auth: s.authz, ctx: ctx}.canList(k.resource, "")
	}
	if s.store, err = newStore(ctx, cfg, resources); err != nil {
		return nil, fmt.Errorf("watch the hub: %w", err)
	}
	s.routes()
	return s, nil
}
