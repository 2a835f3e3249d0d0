// Package localfleet runs a fleet of real Kubernetes control planes on 127.0.0.1: one hub and
// any number of spokes, each an etcd and a kube-apiserver with its own private data directory,
// certificates and admin kubeconfig.
//
// It is what `flotilla dev up`, the integration and end-to-end tests and the benchmarks stand on.
// Nothing here is faked: the planes are the kube-apiserver, kube-controller-manager,
// kube-scheduler and etcd binaries built from Go modules by `make tools`, so apply semantics,
// generation, resourceVersion, watches and admission behave exactly as on a real cluster.
//
// A spoke is either API only (etcd + kube-apiserver: about 300 MB, for scale tests) or full
// (plus kube-controller-manager, kube-scheduler and kwok driving fake Nodes), so that
// Deployments on it really become Available without running a single container. The hub runs a
// kube-controller-manager restricted to the garbage-collector and namespace controllers:
// deletion behaves as users expect, and no workload controller ever touches hub Deployments.
//
// Every process a Fleet starts is stopped by the Fleet, by PID, on success and failure alike.
// Child processes also receive SIGKILL if the process that started them dies, so a killed test
// or a killed `flotilla dev up` leaves nothing running.
//
// A plane can be marked clean and later reset to that state in place (reset.go): the tests
// hand one fleet on from test to test this way (fleettest) instead of starting one each.
//
// This package is not a way to run production clusters: the certificates are throwaway, etcd
// runs without fsync, and everything listens on loopback only.
package localfleet
