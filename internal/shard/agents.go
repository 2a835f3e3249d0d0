package shard

import (
	"context"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/flotilla-dev/flotilla/internal/agent"
	"github.com/flotilla-dev/flotilla/internal/clusterwork"
	"github.com/flotilla-dev/flotilla/internal/deliver"
)

// DefaultRemovalGrace is how long an owner must be out of a cluster's work before a replica's
// agent removes its objects there. The work comes from the hub's own cache, so the grace need
// not outlast a hub outage as a pull cluster's does; it outlasts a record deleted and written
// again within one change.
const DefaultRemovalGrace = 30 * time.Second

// Agents runs, for each cluster the coordinator starts on this replica, an agent in this
// process that delivers the cluster's work (package agent), until the coordinator stops the
// cluster here (its context ends: the cluster moved to another replica, or went away).
type Agents struct {
	// Work is the work endpoint's handler (clusterwork.Handler.Routes), asked in memory.
	Work http.Handler
	// RemovalGrace is the agents' removal grace (DefaultRemovalGrace when 0).
	RemovalGrace time.Duration
	// Deliver tunes each agent's delivery engine as the hub's own is tuned.
	Deliver deliver.Options
	// Log gets a line when an agent starts and ends.
	Log logr.Logger
}

// Engage starts the cluster's agent; it returns at once.
func (a *Agents) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	grace := a.RemovalGrace
	if grace <= 0 {
		grace = DefaultRemovalGrace
	}
	log := a.Log.WithValues("cluster", string(name))
	go func() {
		log.Info("Delivering to the cluster from this replica")
		err := agent.Run(ctx, agent.Options{Cluster: string(name), InProcess: clusterwork.Local(a.Work), Engaged: cl,
			RemovalGrace: grace, DeliverOptions: a.Deliver})
		if err != nil && ctx.Err() == nil {
			log.Error(err, "The cluster's agent stopped; it starts again when the cluster is engaged again")
			return
		}
		log.Info("No longer delivering to the cluster from this replica")
	}()
	return nil
}

// Start implements manager.Runnable: the agents run on their clusters' contexts.
func (a *Agents) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection says every replica runs the agents of the clusters it holds.
func (a *Agents) NeedLeaderElection() bool { return false }
