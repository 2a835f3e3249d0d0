package ledger

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// Agents says which clusters an agent delivers to: an agent reads its cluster's work from the
// records (spec.work, through the work endpoint) and reports into their status, and the hub's
// own deliverer submits nothing for that cluster. That is a pull cluster (Cluster.spec.mode
// Pull, its agent on the spoke), and, on a sharded hub, every cluster: each replica delivers
// to the clusters it holds through agents in its own process (package shard).
type Agents struct {
	// Hub reads Clusters: the hub cache.
	Hub client.Reader
	// Everywhere says every cluster is delivered by an agent (a sharded hub).
	Everywhere bool
}

// Deliver reports whether an agent delivers to cluster. A Cluster that cannot be read is not
// a pull cluster: the deliverer then reports it Disconnected, which holds what depends on it.
func (a Agents) Deliver(ctx context.Context, cluster string) bool {
	if a.Everywhere {
		return true
	}
	if a.Hub == nil {
		return false
	}
	cl := &flotillav1.Cluster{}
	return a.Hub.Get(ctx, client.ObjectKey{Name: cluster}, cl) == nil && cl.Pulls()
}
