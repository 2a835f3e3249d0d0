package cli

import (
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/flotilla-dev/flotilla/internal/dashboard"
	"github.com/flotilla-dev/flotilla/internal/hub"
)

// runWithDashboard runs the hub controller and the hub's dashboard until ctx ends or one of
// them fails.
func runWithDashboard(ctx context.Context, cfg *rest.Config, opts hub.Options, addr string, log io.Writer) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return hub.Run(ctx, cfg, opts) })
	g.Go(func() error {
		err := dashboard.Serve(ctx, cfg, dashboard.Options{Addr: addr, Hub: true, Log: log,
			Ready: func(url string) { _, _ = fmt.Fprintf(log, "dashboard: serving %s\n", url) }})
		if err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
		return nil
	})
	return g.Wait()
}
