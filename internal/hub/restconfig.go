package hub

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// aheadWriter is the client of the hub writes a delivery waits for (ledger.Ledger.Ahead: a
// record prepared, a rollout's spec.work written ahead): the manager's, without its
// client-side rate limit.
//
// A kubeconfig never sets a rate, and client-go's default for a config without one is a token
// bucket of 5 requests a second (burst 10) for each kind's client. The records' status writes,
// made aside by the ledger's workers, fill that bucket for the Delivery kind, and a cluster the
// rollout gate let through waited in line behind them for its spec.work, 200 ms to 1.4 s
// before its delivery (rollout_gate_p99 in `make bench`). Writes ahead are few (one per
// cluster that takes a new revision or kind, by the owners' reconciles), so nothing else
// bounds them but the hub's API Priority and Fairness. The writes aside keep the bucket,
// which also merges a record's successive results into one write while they wait.
func aheadWriter(mgr manager.Manager) (client.Writer, error) {
	return client.New(unthrottled(mgr.GetConfig()), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
}

// unthrottled is cfg without a client-side rate limit, unless cfg sets one of its own.
func unthrottled(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = -1, -1
	}
	return cfg
}
