package localfleet

// KubernetesVersion is the version of the Kubernetes binaries that `make tools` builds into
// bin/ (KUBE_VERSION in the Makefile): what every local plane's API server reports, and what
// the fake Nodes' kubelets claim to run. TestKubernetesVersionMatchesMakefile keeps the two equal.
const KubernetesVersion = "v1.36.3"
