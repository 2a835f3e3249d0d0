package hub

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"

	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/ledger"
	"github.com/flotilla-dev/flotilla/internal/render"
	"github.com/flotilla-dev/flotilla/internal/revisions"
)

// serveWork serves pull-mode agents their clusters' work on opts.WorkAddr, from the hub cache
// and the revision store the owner controllers use. Plain HTTP (no certificate) is refused on
// anything but a loopback address: the responses carry Secret data. It returns the endpoint's
// handler, which a sharded replica's own agents ask in memory (also without WorkAddr), or nil
// when neither needs it.
//
// The results agents post are written into their records by the ledger, and each owner whose
// record took one is notified (notify), so that its controller counts the pull cluster anew.
func serveWork(mgr manager.Manager, cfg *rest.Config, store *revisions.Store, records *ledger.Ledger, notify func(render.Owner),
	owners ledger.Owners, opts Options) (http.Handler, error) {
	listen := opts.WorkAddr != "" && opts.WorkAddr != "0"
	if !listen && opts.Shard == nil {
		return nil, nil
	}
	if (opts.WorkCertFile == "") != (opts.WorkKeyFile == "") {
		return nil, fmt.Errorf("the work endpoint needs both a certificate and a key file, or neither")
	}
	if listen && opts.WorkCertFile == "" && !loopback(opts.WorkAddr) {
		return nil, fmt.Errorf("the work endpoint serves Secret data: without a certificate (--work-cert-file, --work-key-file) it is served on a loopback address only (127.0.0.1:PORT, [::1]:PORT, localhost:PORT), not %q", opts.WorkAddr)
	}
	authn, err := clusterwork.NewAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	// The Delivery policy is read directly, once per interval: the cache need not watch it.
	h := &clusterwork.Handler{Hub: mgr.GetClient(), Owners: owners, Revisions: store, Authenticator: authn,
		Log: ctrl.Log.WithName("clusterwork"), Notify: notify, Policies: mgr.GetAPIReader(), Accounts: mgr.GetAPIReader(), ProtectionInterval: opts.WorkProtectionInterval}
	if records != nil {
		h.Reports = records
	}
	// A request that asks to wait is woken by its cluster's records changing, seen by the
	// informer the ledger's cache has anyway.
	changes := &clusterwork.Changes{}
	inf, err := mgr.GetCache().GetInformer(context.Background(), &flotillav1.Delivery{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("work endpoint: watch Delivery records: %w", err)
	}
	if _, err := inf.AddEventHandler(changes.RecordHandler()); err != nil {
		return nil, fmt.Errorf("work endpoint: watch Delivery records: %w", err)
	}
	h.Changes = changes
	routes := h.Routes()
	if !listen {
		return routes, nil
	}
	return routes, mgr.Add(&clusterwork.Server{Addr: opts.WorkAddr, CertFile: opts.WorkCertFile, KeyFile: opts.WorkKeyFile,
		Handler: routes, Ready: opts.WorkReady})
}
