package hub

import "k8s.io/client-go/rest"

// restConfig is the configuration of the hub controller's requests to the hub: cfg with the
// controller's user agent and, unless cfg sets a rate limit of its own, no client-side one.
//
// The hub's API Priority and Fairness sets their pace, as each spoke's does for the requests
// to it (package spokeclient); how many are in flight at once is bounded by the controller's
// workers (reconciles, the ledger's and the revisions' writers aside). A kubeconfig never
// sets a rate, and client-go's default for a config without one is a token bucket of 5
// requests a second (burst 10) for each kind's client: the Delivery records' status writes
// and a rollout's spec.work writes, each a cluster's turn, waited in one line, and a cluster
// let through by the rollout gate waited 200 ms to 1.4 s for its record before its delivery
// (rollout_gate_p99 in `make bench`).
func restConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = UserAgent
	if cfg.RateLimiter == nil && cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = -1, -1
	}
	return cfg
}
