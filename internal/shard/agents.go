package shard

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
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
// cluster here (its context ends: the cluster moved to another replica, or went away). An
// agent that cannot start (its spoke does not answer yet) is started again with backoff.
type Agents struct {
	// Work is the work endpoint's handler (clusterwork.Handler.Routes), asked in memory.
	Work http.Handler
	// RemovalGrace is the agents' removal grace (DefaultRemovalGrace when 0).
	RemovalGrace time.Duration
	// Deliver tunes each agent's delivery engine as the hub's own is tuned.
	Deliver deliver.Options
	// Log gets a line when an agent starts and ends.
	Log logr.Logger

	mu      sync.Mutex
	running map[string]chan struct{} // closed when the cluster's agent has stopped
}

// Engage starts the cluster's agent; it returns at once.
func (a *Agents) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	grace := a.RemovalGrace
	if grace <= 0 {
		grace = DefaultRemovalGrace
	}
	cluster := string(name)
	stopped := make(chan struct{})
	a.mu.Lock()
	previous := a.running[cluster]
	if a.running == nil {
		a.running = map[string]chan struct{}{}
	}
	a.running[cluster] = stopped
	a.mu.Unlock()
	log := a.Log.WithValues("cluster", cluster)
	go func() {
		defer close(stopped)
		if previous != nil {
			<-previous // one agent per cluster at a time, also across an engagement's renewal
		}
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 6, Cap: 30 * time.Second}
		for ctx.Err() == nil {
			// The agent's own spoke cache, made from the engagement's credentials: what it
			// watches ends with it, and a replica that no longer holds the cluster keeps none.
			err := agent.Run(ctx, agent.Options{Cluster: cluster, InProcess: clusterwork.Local(a.Work), Engaged: cl,
				RemovalGrace: grace, DeliverOptions: a.Deliver})
			if err == nil || ctx.Err() != nil {
				return
			}
			wait := backoff.Step()
			log.Error(err, "The cluster's agent could not start; starting it again", "after", wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}()
	return nil
}

// WaitStopped waits, until ctx ends, for the cluster's agent to have stopped (Stopper).
func (a *Agents) WaitStopped(ctx context.Context, cluster string) {
	a.mu.Lock()
	stopped := a.running[cluster]
	a.mu.Unlock()
	if stopped == nil {
		return
	}
	select {
	case <-stopped:
	case <-ctx.Done():
	}
}

// Start implements manager.Runnable: the agents run on their clusters' contexts.
func (a *Agents) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection says every replica runs the agents of the clusters it holds.
func (a *Agents) NeedLeaderElection() bool { return false }
