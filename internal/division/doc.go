// Package division decides what each chosen cluster runs of an owner's divided workloads
// (Deployments, StatefulSets and ReplicaSets whose spec.replicas a Placement divides), for
// every owner kind alike:
//
//   - Divide: each workload's share per cluster, by scheduler.Divide over the Placement's
//     replica policy (weights, minima, maxima per group of clusters). What each cluster runs now
//     (the Delivery records' spec.replicas) is the previous division, so a division is sticky:
//     it moves only by what changed, and a restart or a wiped status moves nothing.
//   - Hold: while a move is not finished, the replicas a cluster that is to run fewer keeps,
//     until every cluster that runs the workload at its new share is Ready (make before break).
//   - NewPass, Pass.Apply: a cluster's copies of the owner's objects with its replicas written
//     in. An autoscaling HPA delivered with a divided workload gets its minReplicas and
//     maxReplicas divided by the same shares (DivideBounds), only where the workload has a
//     share, and the workload's copies there carry the share annotation, which hands their
//     spec.replicas over to the HPA until the share changes (hpa.go).
//
// It is pure: the caller reads the records, the Clusters and the delivery results.
package division
