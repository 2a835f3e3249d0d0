package cli

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flotilla-dev/flotilla/internal/dashboard"
)

func newDashboardCommand(hf *hubFlags) *cobra.Command {
	opts := dashboard.Options{Addr: "127.0.0.1:0"}
	open := true
	cmd := &cobra.Command{
		Use:     "dashboard",
		Short:   "Serve the fleet dashboard on this machine, with your own access to the hub",
		GroupID: groupFleet,
		Long: `Serve a web dashboard of the fleet on 127.0.0.1, read with your hub kubeconfig: the
clusters, what runs on each and which owner and Placement put it there, each owner's objects by
cluster with their state and the diff of a drifted object, Placements' decisions and fleet
APIs. Pages change as the hub does, without reloading. You see what your kubeconfig user may
read on the hub; Secret values are never shown.

The URL is opened in your browser when there is one, and printed always. It carries a random
key that the browser opening it keeps in a cookie: the dashboard acts with your credentials, so
nobody else on the machine gets anything from the port alone. The hub can serve the same
dashboard to everyone, each with their own access: flotilla hub --dashboard-bind-address
(docs/dashboard.md).`,
		Example: `  flotilla dashboard
  flotilla dashboard --address 127.0.0.1:8800 --open=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hf.restConfig()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			opts.Log = cmd.ErrOrStderr()
			opts.Ready = func(url string) {
				_, _ = fmt.Fprintf(out, "dashboard: %s (Ctrl-C stops it)\n", url)
				if open {
					openBrowser(url)
				}
			}
			return dashboard.Serve(ctx, cfg, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "address", opts.Addr, "where to serve the dashboard; keep it on a loopback address, it acts with your credentials")
	cmd.Flags().BoolVar(&open, "open", open, "open the dashboard in a browser when one is found")
	return cmd
}

// openBrowser opens url with the desktop's opener, when there is one; the URL is printed anyway.
func openBrowser(url string) {
	opener := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		opener = "open"
	case "windows":
		return
	}
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" && runtime.GOOS != "darwin" {
		return
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return
	}
	cmd := exec.Command(path, url)
	if cmd.Start() == nil {
		go func() { _ = cmd.Wait() }()
	}
}
