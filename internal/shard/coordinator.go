package shard

import (
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded"
)

// Options say who this replica is and how quickly the replicas notice each other.
type Options struct {
	// ID names this replica among its peers (its Pod name); unique per replica.
	ID string
	// Namespace holds the peer and fence Leases (the hub's own namespace).
	Namespace string
	// LeaseDuration is how long a replica's Lease and its fence Leases hold without renewal
	// (default 15s): it bounds how long a dead replica's clusters wait for another.
	LeaseDuration time.Duration
	// Probe is how often a replica looks at its peers and fences again (default 2s).
	Probe time.Duration
}

// Lease names.
const (
	fencePrefix = "flotilla-shard"
	peerPrefix  = "flotilla-replica"
)

func (o Options) withDefaults() Options {
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.Probe <= 0 {
		o.Probe = 2 * time.Second
	}
	return o
}

// Coordinator is the sharded coordinator for a hub manager: kube reads and writes the Leases
// (an uncached client: the hub cache does not watch Leases).
func Coordinator(kube client.Client, opts Options, log logr.Logger) mcmanager.Coordinator {
	opts = opts.withDefaults()
	c := sharded.New(kube, log,
		sharded.WithPeerRegistry(newPeers(kube, opts.Namespace, opts.ID, opts.LeaseDuration, log)),
		sharded.WithShardLease(opts.Namespace, fencePrefix),
		sharded.WithPerClusterLease(true),
		sharded.WithLeaseTimings(opts.LeaseDuration, opts.LeaseDuration/3, 750*time.Millisecond),
		sharded.WithSynchronizationIntervals(opts.Probe, 15*time.Second))
	return everyReplica{c}
}

// everyReplica runs the coordinator's loop on every replica, elected or not: it is what
// divides the clusters between them (the loop's own runnable would wait for the election).
type everyReplica struct{ *sharded.Coordinator }

func (c everyReplica) Runnable() manager.Runnable {
	return unelected{c.Coordinator.Runnable()}
}

type unelected struct{ manager.Runnable }

func (unelected) NeedLeaderElection() bool { return false }
