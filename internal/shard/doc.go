// Package shard divides a hub's clusters between its replicas (`flotilla hub --shard`) with a
// multicluster-runtime coordinator (Coordinator): each replica publishes itself in a peer Lease
// (peers.go), rendezvous hashing over the live peers (multicluster-runtime's sharder) names the
// replica that should hold each cluster, and a per-cluster fence Lease (fence.go) makes sure one
// replica at most delivers to a cluster at a time. A replica that dies stops renewing its
// Leases; once they expire, the replicas left take its clusters over. A replica that stops
// gives each cluster's fence up as soon as its delivery there has stopped; a delivery that does
// not stop in time is given up, and its writes are refused from then on (fencedCluster).
// docs/ha.md says why it is not multicluster-runtime's own sharded coordinator.
//
// What a replica runs for a cluster it holds is an agent in its own process (Agents): the same
// agent `flotilla agent` runs on a pull cluster (package agent), asking the work endpoint's
// handler in memory (clusterwork.Local) for the cluster's work and reporting its results into
// the Delivery records through the ledger. So the elected replica's owner controllers decide
// what every cluster runs and write it into the records (spec.work), as they do for pull
// clusters (ledger.Agents.Everywhere), and the replica holding a cluster delivers it. Owner
// controllers, the scheduler, the importers and every status write stay with the elected
// replica: they are hub-side work that one writer keeps consistent, and it continues on the
// other replicas' deliveries while the election moves.
//
// It is not for single-replica hubs: without --shard, the elected replica delivers to every
// cluster itself (push), which is faster for a change (no record round trip).
package shard
